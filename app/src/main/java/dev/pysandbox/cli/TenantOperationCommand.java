package dev.pysandbox.cli;

import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import picocli.CommandLine.Mixin;

/**
 * A command that is one operation on a tenant's view of the data directory, called as MCP and REST
 * call it ({@link OperationCalls}): its answer printed for a person, or with {@code --json} as the
 * API returns it. A subclass says which arguments it admits and how the answer reads.
 *
 * @param <T> the operation's result
 */
abstract class TenantOperationCommand<T> extends ReportCommand<T> {
  @Mixin TenantOption tenant;

  TenantOperationCommand(OperationOptions options) {
    super(options);
  }

  @Override
  final T fetch(OperatorService service, Arguments args) {
    return OperationCalls.call(options().operation(), tenant.of(service), args);
  }
}

package dev.pysandbox.cli;

import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A command that is one operation on a tenant's view of the data directory, called as MCP and REST
 * call it ({@link OperationCalls}): its answer printed for a person, or with {@code --json} as the
 * API returns it. A subclass says which arguments it admits and how the answer reads.
 *
 * @param <T> the operation's result
 */
abstract class TenantOperationCommand<T> extends ServiceCommand {
  @Option(names = "--json", description = "Print JSON.")
  boolean json;

  @Mixin TenantOption tenant;

  TenantOperationCommand(OperationOptions options) {
    super(options);
  }

  @Override
  public final Integer call() {
    Arguments args = args();
    try (OperatorService service = openReadOnly()) {
      T result = OperationCalls.call(options().operation(), tenant.of(service), args);
      if (json) {
        return printJson(result);
      }
      print(result);
      return 0;
    }
  }

  /** Prints the answer for a person (what a record holds escaped for the terminal). */
  abstract void print(T result);
}

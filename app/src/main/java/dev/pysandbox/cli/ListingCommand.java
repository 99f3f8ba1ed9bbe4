package dev.pysandbox.cli;

import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import picocli.CommandLine.Mixin;

/**
 * A {@link ReportCommand} that lists one tenant's records or, with {@code --all-tenants}, every
 * tenant's with a TENANT column first (runs, sessions, security events): the choice between the two
 * and the column are written here once; a subclass says how each is looked up and what a row holds.
 *
 * @param <T> the listing
 */
abstract class ListingCommand<T> extends ReportCommand<T> {
  @Mixin TenantScope tenant;

  /** True with {@code --all-tenants} (known once the options are checked). */
  boolean everyTenant;

  /** A listing that is no operation. */
  ListingCommand() {}

  /** A listing that is an operation, admitting these of its arguments. */
  ListingCommand(OperationOptions options) {
    super(options);
  }

  @Override
  final void checkOptions() {
    everyTenant = tenant.all();
  }

  @Override
  final T fetch(OperatorService service, Arguments args) {
    return everyTenant ? ofEveryTenant(service, args) : ofTenant(tenant.of(service), args);
  }

  /** Every tenant's records, each naming its tenant. */
  abstract T ofEveryTenant(OperatorService service, Arguments args);

  /**
   * The named tenant's records: by default the operation the listing is, called as MCP and REST
   * call it ({@link OperationCalls}); a listing that is no operation says how.
   */
  T ofTenant(SandboxService tenant, Arguments args) {
    return OperationCalls.call(options().operation(), tenant, args);
  }

  /** Prints a row of {@code format} (ending with %n), after the TENANT column when there is one. */
  final void row(String format, String tenant, Object... cells) {
    Object[] all = new Object[cells.length + 1];
    all[0] = everyTenant ? tenant : "";
    System.arraycopy(cells, 0, all, 1, cells.length);
    System.out.printf((everyTenant ? "%-20s  " : "%s") + format, all);
  }

  /** Prints the header row: {@link #row} with the column names. */
  final void header(String format, Object... names) {
    row(format, "TENANT", names);
  }
}

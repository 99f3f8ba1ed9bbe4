package dev.pysandbox.cli;

import dev.pysandbox.api.PysandboxException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code --tenant NAME} or {@code --all-tenants}, for the commands that list (sessions, runs, logs,
 * events): an operator sees every tenant's at once, with a TENANT column, without knowing the names
 * of the keys' owners. Without either the listing is {@code local}'s, as before.
 */
final class TenantScope extends TenantOption {
  @Option(
      names = "--all-tenants",
      description =
          "Every tenant's (the host operator's view), with a TENANT column; not with --tenant.")
  boolean allTenants;

  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  /**
   * True for every tenant.
   *
   * @throws PysandboxException {@code invalid_argument} when {@code --tenant} is given too
   */
  boolean all() {
    if (allTenants && command.commandLine().getParseResult().hasMatchedOption("--tenant")) {
      throw PysandboxException.invalid(
          "--all-tenants lists every tenant's; leave out --tenant "
              + tenant
              + ", or --all-tenants");
    }
    return allTenants;
  }
}

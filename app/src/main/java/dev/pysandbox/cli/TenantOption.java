package dev.pysandbox.cli;

import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.Tenants;
import picocli.CommandLine.Option;

/**
 * {@code --tenant NAME}: which tenant's runs and sessions a command looks at. The CLI acts as the
 * tenant {@code local} (stdio's) unless told otherwise; an operator names another to see what an
 * API key's owner did over HTTP.
 */
class TenantOption {
  @Option(
      names = "--tenant",
      paramLabel = "NAME",
      defaultValue = Tenants.LOCAL,
      description = "The tenant whose runs and sessions to use (default: ${DEFAULT-VALUE}).")
  String tenant;

  /** The named tenant's view of {@code tenants}. */
  SandboxService of(Tenants tenants) {
    return tenants.forTenant(tenant);
  }
}

package dev.pysandbox.api;

/**
 * The core as each tenant sees it. Every session, run and file belongs to one tenant; a tenant's
 * view shows and changes only what it owns, and answers another tenant's id exactly as an id that
 * does not exist. Stdio and the CLI act as {@link #LOCAL}; the HTTP face as the tenant of the
 * caller's key.
 */
public interface Tenants {
  /** The tenant of the local faces (stdio, CLI) and of everything recorded before tenants. */
  String LOCAL = "local";

  /**
   * The view of one tenant.
   *
   * @throws PysandboxException {@code invalid_argument} for a name that breaks {@link Ids}' tenant
   *     rule
   */
  SandboxService forTenant(String tenant);
}

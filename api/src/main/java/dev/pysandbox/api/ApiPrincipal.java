package dev.pysandbox.api;

import java.util.List;

/**
 * Who is calling, once an API key is accepted: the key that was presented (by its public id), the
 * tenant the call acts for, and the key's role.
 *
 * @param role {@value #AGENT} (what every key may do) or {@value #APPROVER} (may also decide the
 *     tenant's approvals)
 */
public record ApiPrincipal(String keyId, String tenant, String role) {
  public static final String AGENT = "agent";
  public static final String APPROVER = "approver";
  public static final List<String> ROLES = List.of(AGENT, APPROVER);

  /** An agent's key. */
  public ApiPrincipal(String keyId, String tenant) {
    this(keyId, tenant, AGENT);
  }

  /**
   * @throws PysandboxException {@code invalid_argument} naming the roles, for another one
   */
  public static String requireRole(String role) {
    if (!ROLES.contains(role)) {
      throw PysandboxException.invalid(
          "role " + PysandboxException.quote(role) + " is unknown: use one of " + ROLES);
    }
    return role;
  }
}

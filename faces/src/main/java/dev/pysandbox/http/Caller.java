package dev.pysandbox.http;

import java.util.Objects;

/**
 * Who made an HTTP request: the id of the API key it presented (never the key itself) and the
 * tenant that key belongs to.
 *
 * @param keyId the key's id, safe to log and to show; rate limits are kept per key id
 * @param tenant the tenant whose sessions, runs and files the request acts on
 * @param role the key's role ({@code agent} or {@code approver}); a request without a key (a server
 *     started without keys) is an {@code agent}'s: it can never decide an approval
 */
public record Caller(String keyId, String tenant, String role) {
  public Caller {
    Objects.requireNonNull(keyId, "keyId");
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(role, "role");
  }

  /** An agent's request. */
  public Caller(String keyId, String tenant) {
    this(keyId, tenant, dev.pysandbox.api.ApiPrincipal.AGENT);
  }

  /** True for a key that may decide its tenant's approvals. */
  public boolean approver() {
    return dev.pysandbox.api.ApiPrincipal.APPROVER.equals(role);
  }
}

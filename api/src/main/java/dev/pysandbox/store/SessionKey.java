package dev.pysandbox.store;

/**
 * A session's identity: session ids are per tenant, so two tenants may each have a session {@code
 * default}, and neither ever reaches the other's.
 *
 * @param tenant the owner ({@link dev.pysandbox.api.Tenants})
 * @param id the session id the tenant chose or was given
 */
public record SessionKey(String tenant, String id) {
  public SessionKey {
    java.util.Objects.requireNonNull(tenant);
    java.util.Objects.requireNonNull(id);
  }

  @Override
  public String toString() {
    return dev.pysandbox.api.Tenants.LOCAL.equals(tenant) ? id : tenant + "/" + id;
  }
}

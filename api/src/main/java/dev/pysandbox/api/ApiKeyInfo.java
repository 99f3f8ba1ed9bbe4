package dev.pysandbox.api;

/**
 * An API key as it may be shown: never the key, never its hash. Instants are ISO-8601 UTC text, as
 * in every other record.
 *
 * @param keyId the public id, {@code key_} and 12 hex digits
 * @param tenant the tenant every request made with the key acts for
 * @param label what the key is for, as its maker wrote it; null when none was given
 * @param createdAt when the key was made
 * @param lastUsedAt when a request last authenticated with it, to within a minute; null if never
 * @param revokedAt when it was revoked; null while it is valid
 * @param role {@code agent} or {@code approver} ({@link ApiPrincipal#ROLES})
 */
public record ApiKeyInfo(
    String keyId,
    String tenant,
    String label,
    String createdAt,
    String lastUsedAt,
    String revokedAt,
    String role) {

  /** An agent's key. */
  public ApiKeyInfo(
      String keyId,
      String tenant,
      String label,
      String createdAt,
      String lastUsedAt,
      String revokedAt) {
    this(keyId, tenant, label, createdAt, lastUsedAt, revokedAt, ApiPrincipal.AGENT);
  }
}

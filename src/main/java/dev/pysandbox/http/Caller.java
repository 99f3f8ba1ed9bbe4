package dev.pysandbox.http;

import java.util.Objects;

/**
 * Who made an HTTP request: the id of the API key it presented (never the key itself) and the
 * tenant that key belongs to.
 *
 * @param keyId the key's id, safe to log and to show; rate limits are kept per key id
 * @param tenant the tenant whose sessions, runs and files the request acts on
 */
public record Caller(String keyId, String tenant) {
  public Caller {
    Objects.requireNonNull(keyId, "keyId");
    Objects.requireNonNull(tenant, "tenant");
  }
}

package dev.pysandbox.cli;

import dev.pysandbox.api.ApiKeyInfo;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.store.ApiKeys;
import java.util.HashSet;
import java.util.Set;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many tenants may call a keyed server: those with a key not revoked (keys are made and revoked
 * by other processes, so the count is read again at most every 10 s), and the stdio client's tenant
 * when the server serves stdio too. The server's fair share of sessions is divided by it.
 */
final class KeyedTenants implements IntSupplier {
  private static final Logger log = LoggerFactory.getLogger(KeyedTenants.class);
  private static final long REFRESH_NANOS = 10_000_000_000L;

  private final ApiKeys keys;
  private final boolean stdio;
  private int count = 1;
  private long readAt;
  private boolean read;

  KeyedTenants(ApiKeys keys, boolean stdio) {
    this.keys = keys;
    this.stdio = stdio;
  }

  @Override
  public synchronized int getAsInt() {
    long now = System.nanoTime();
    if (read && now - readAt < REFRESH_NANOS) {
      return count;
    }
    try {
      Set<String> tenants = new HashSet<>();
      for (ApiKeyInfo k : keys.list()) {
        if (k.revokedAt() == null) {
          tenants.add(k.tenant());
        }
      }
      if (stdio) {
        tenants.add(Tenants.LOCAL);
      }
      count = Math.max(1, tenants.size());
    } catch (RuntimeException e) {
      // The last count stands (the store answers again soon).
      log.warn("could not count the tenants with keys: {}", e.toString());
    }
    read = true;
    readAt = now;
    return count;
  }
}

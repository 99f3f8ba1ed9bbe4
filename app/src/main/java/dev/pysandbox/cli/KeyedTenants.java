package dev.pysandbox.cli;

import dev.pysandbox.api.ApiKeyInfo;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.http.PeriodicRead;
import dev.pysandbox.store.ApiKeys;
import dev.pysandbox.util.TimeSource;
import java.time.Duration;
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
  private final PeriodicRead<Integer> count;

  KeyedTenants(ApiKeys keys, boolean stdio) {
    this.count =
        new PeriodicRead<>(
            Duration.ofSeconds(10),
            TimeSource.system(),
            () -> count(keys, stdio),
            (e, last) -> {
              // The last count stands (the store answers again soon).
              log.warn("could not count the tenants with keys: {}", e.toString());
              return last == null ? 1 : last;
            });
  }

  @Override
  public int getAsInt() {
    return count.get();
  }

  private static int count(ApiKeys keys, boolean stdio) {
    Set<String> tenants = new HashSet<>();
    for (ApiKeyInfo k : keys.list()) {
      if (k.revokedAt() == null) {
        tenants.add(k.tenant());
      }
    }
    if (stdio) {
      tenants.add(Tenants.LOCAL);
    }
    return Math.max(1, tenants.size());
  }
}

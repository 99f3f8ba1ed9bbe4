package dev.pysandbox.core.blobs;

import java.util.function.ToLongFunction;

/**
 * The bound on the files all of one tenant's runs keep together ({@code tenant_storage_max_mb};
 * issue 24 item 9: each run kept a full copy of every changed file, so one tenant's runs could fill
 * the data directory for all). What a tenant keeps is read from the store when a run keeps files
 * (the sizes its records list), so a deleted or purged run frees its room at once and two servers
 * sharing a data directory see the same figure.
 *
 * @param maxBytes {@code tenant_storage_max_mb} in bytes, 0 for no bound
 * @param used the bytes a tenant's runs keep now
 */
public record TenantStorage(long maxBytes, ToLongFunction<String> used) {
  /** No bound (tests that build the core by hand). */
  static final TenantStorage NONE = new TenantStorage(0, t -> 0);

  /** Bytes {@code tenant} may still keep, {@link Long#MAX_VALUE} when unbounded. */
  public long left(String tenant) {
    if (maxBytes <= 0 || tenant == null) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, maxBytes - used.applyAsLong(tenant));
  }
}

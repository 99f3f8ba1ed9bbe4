package dev.pysandbox.api;

/**
 * Resource limits a caller asks for a session; each {@code null} takes the server's default, and
 * none may pass the server's maximum. The core checks them (the maxima are its configuration's),
 * against the minima declared here.
 *
 * @param memoryMb memory of the sandbox in MiB (no swap)
 * @param pids processes and threads at once
 * @param cpus CPU time per wall-clock second, in cores
 * @param diskQuotaMb total size of the files in its {@code /mnt/data} in MiB
 */
public record LimitRequest(Integer memoryMb, Integer pids, Double cpus, Integer diskQuotaMb) {
  public static final LimitRequest DEFAULTS = new LimitRequest(null, null, null, null);

  /** Smallest memory a sandbox may ask for: Python, the runner and a preloaded pandas fit. */
  public static final int MIN_MEMORY_MB = 64;

  public static final int MIN_PIDS = 4;
  public static final double MIN_CPUS = 0.05;
  public static final int MIN_DISK_QUOTA_MB = 1;

  /**
   * The limits a run record shows ({@link Limits#describe()}), asked for again: what a re-run of
   * that run gets. Keys that are missing or not numbers are left to the server's default.
   */
  public static LimitRequest of(java.util.Map<String, Object> described) {
    if (described == null) {
      return DEFAULTS;
    }
    return new LimitRequest(
        described.get("memory_limit_mb") instanceof Number n ? n.intValue() : null,
        described.get("pids_limit") instanceof Number n ? n.intValue() : null,
        described.get("cpu_limit") instanceof Number n ? n.doubleValue() : null,
        described.get("disk_quota_mb") instanceof Number n ? n.intValue() : null);
  }

  /** True when every limit is left to the server's default. */
  public boolean isDefault() {
    return memoryMb == null && pids == null && cpus == null && diskQuotaMb == null;
  }
}

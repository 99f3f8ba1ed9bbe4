package dev.pysandbox.api;

/**
 * Resource limits a caller asks for a session; each {@code null} takes the server's default, and
 * none may pass the server's maximum.
 *
 * @param memoryMb memory of the sandbox in MiB (no swap)
 * @param pids processes and threads at once
 * @param cpus CPU time per wall-clock second, in cores
 * @param diskQuotaMb total size of the files in its {@code /mnt/data} in MiB
 */
public record LimitRequest(Integer memoryMb, Integer pids, Double cpus, Integer diskQuotaMb) {
  public static final LimitRequest DEFAULTS = new LimitRequest(null, null, null, null);

  /** True when every limit is left to the server's default. */
  public boolean isDefault() {
    return memoryMb == null && pids == null && cpus == null && diskQuotaMb == null;
  }
}

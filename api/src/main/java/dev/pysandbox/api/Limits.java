package dev.pysandbox.api;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Resource limits of one sandbox. A value the configuration produces (defaults and maxima), the
 * core validates requests against, a backend enforces and a run record shows ({@link #describe}),
 * so it lives here, where all of them can reach it without {@code config} and {@code backend}
 * depending on each other.
 *
 * @param memoryBytes memory (and swap: none) the sandbox's processes may use together
 * @param pids processes and threads it may have at once
 * @param cpus CPU time per wall-clock second, in cores (1.0 = one core)
 * @param diskBytes total size of the files in its workspace
 * @param tmpBytes size of its private {@code /tmp} (memory-backed, so it counts as memory too)
 */
public record Limits(long memoryBytes, int pids, double cpus, long diskBytes, long tmpBytes) {
  public static final long MIB = 1024L * 1024;

  /** The limits as the API shows them. */
  public Map<String, Object> describe() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("memory_limit_mb", memoryBytes / MIB);
    m.put("pids_limit", pids);
    m.put("cpu_limit", cpus);
    m.put("disk_quota_mb", diskBytes / MIB);
    m.put("tmp_size_mb", tmpBytes / MIB);
    return m;
  }
}

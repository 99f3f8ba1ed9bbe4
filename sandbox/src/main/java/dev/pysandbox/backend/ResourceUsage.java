package dev.pysandbox.backend;

/**
 * What the kernel counted for one sandbox (its cgroup) so far.
 *
 * @param peakMemoryBytes highest memory use since the last peak reset
 * @param cpuNanos CPU time used by all its processes
 * @param oomKills processes the kernel killed for passing the memory limit
 * @param pidsLimitHits times a fork or thread start failed at the pids limit
 */
public record ResourceUsage(
    long peakMemoryBytes, long cpuNanos, long oomKills, long pidsLimitHits) {}

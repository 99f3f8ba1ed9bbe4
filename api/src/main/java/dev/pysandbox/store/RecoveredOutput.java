package dev.pysandbox.store;

/**
 * Output a run printed before its server died, as the server had spilled it ({@code
 * events.ndjson}), for the interrupted run's record.
 *
 * @param note what the record's message gains, saying where the output came from
 */
public record RecoveredOutput(
    String stdout,
    boolean stdoutTruncated,
    long stdoutBytes,
    String stderr,
    boolean stderrTruncated,
    long stderrBytes,
    String note) {}

package dev.pysandbox.backend;

/**
 * The outcome of killing a sandbox.
 *
 * @param leftBehind processes of the sandbox still found after the kill and the wait (0 when the
 *     kill held)
 * @param elapsedMillis from the kill order to the check
 */
public record KillReport(int leftBehind, long elapsedMillis) {}

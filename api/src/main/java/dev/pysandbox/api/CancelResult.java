package dev.pysandbox.api;

/**
 * What {@code cancel_run} did.
 *
 * @param cancelled true when this call stopped the run
 * @param status the run's status after the call
 * @param message how it stopped (interrupted, or killed after the grace period), or why nothing was
 *     done
 */
public record CancelResult(String runId, boolean cancelled, RunStatus status, String message) {}

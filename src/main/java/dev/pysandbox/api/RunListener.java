package dev.pysandbox.api;

/**
 * Told about a run while it happens, so that a face can act on it (cancel it when its client gives
 * up, and later stream its output). Called on the thread that runs the call; must not block.
 */
@FunctionalInterface
public interface RunListener {
  RunListener NONE = runId -> {};

  /** The run is recorded and about to start; {@code cancelRun(runId)} reaches it from now on. */
  void started(String runId);
}

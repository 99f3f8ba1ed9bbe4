package dev.pysandbox.api;

/**
 * What a server holds at one moment, for the gauges of its metrics (every tenant's).
 *
 * @param sessionsOpen sandbox sessions open on this server
 * @param poolSize the warm pool's size ({@code pool_size}): sandboxes kept ready or starting
 * @param poolReady sandboxes ready in the pool now
 * @param runsInFlight runs this server is executing or about to, held-for-approval runs not
 *     included
 * @param runsWaiting of those, runs still waiting for their sandbox (a start, an environment build)
 * @param notebooksQueued finished runs whose notebooks are still to be written
 */
public record ServerLoad(
    int sessionsOpen,
    int poolSize,
    int poolReady,
    int runsInFlight,
    int runsWaiting,
    int notebooksQueued) {
  /** A view that holds nothing of its own (a tenant's). */
  public static final ServerLoad NONE = new ServerLoad(0, 0, 0, 0, 0, 0);
}

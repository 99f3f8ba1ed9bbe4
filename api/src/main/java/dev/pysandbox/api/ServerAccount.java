package dev.pysandbox.api;

/**
 * What a server tells about itself rather than about a tenant's runs: its security events' counts,
 * its metrics and load, and the trajectory of the calls its faces answered. Part of {@link
 * SandboxService}; every method has a default that tells nothing, which a tenant's view keeps.
 */
public interface ServerAccount {
  /**
   * How many security events this server recorded since it started, by kind, for its metrics: every
   * tenant's, so only the server's own view (not a tenant's) counts any.
   */
  default SecurityEventCounts securityEventCounts() {
    return SecurityEventCounts.NONE;
  }

  /**
   * From now on tells {@code recorder} what happens on this server (runs ending, sandbox starts,
   * pool takes, environment builds), every tenant's; {@link MetricsRecorder#NONE} stops it. One
   * recorder at a time. Only the server's own view records: a tenant's view ignores it.
   */
  default void recordMetrics(MetricsRecorder recorder) {}

  /**
   * What this server holds now (sessions, the warm pool, runs in flight), for its metrics' gauges;
   * cheap, no store access. Only the server's own view answers: a tenant's gives {@link
   * ServerLoad#NONE}.
   */
  default ServerLoad load() {
    return ServerLoad.NONE;
  }

  /**
   * Adds a call a face answered to the caller's trajectory: {@code
   * <data_dir>/trajectories/<tenant>/sessions/<session_id>.jsonl} for a call that named or made a
   * session, else the day's file, {@code .../days/<yyyy-mm-dd>.jsonl} (UTC). What is kept of the
   * arguments is their sizes and a digest, never their content. Returns at once: the line is
   * written by another thread, and a call the writer cannot keep up with is dropped and counted,
   * never waited for. Never throws. The default records nothing.
   */
  default void recordCall(CallRecord call) {}
}

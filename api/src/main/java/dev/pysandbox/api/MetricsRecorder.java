package dev.pysandbox.api;

import java.util.Locale;

/**
 * What a server tells its metrics as things happen (the role of HikariCP's metrics tracker): runs
 * that end, sandboxes that start, sandboxes taken from the warm pool, package environments asked
 * for. The core does not depend on a metrics library; the HTTP face records these with Micrometer
 * ({@code /metrics}). What the server holds at a moment (sessions open, the pool, runs in flight)
 * is {@link ServerLoad}, read when metrics are scraped.
 *
 * <p>The core calls these on its own threads, often on the path of a call: an implementation must
 * be quick and thread-safe, and what it throws is logged and dropped. Every method does nothing by
 * default.
 */
public interface MetricsRecorder {
  /** Records nothing. */
  MetricsRecorder NONE = new MetricsRecorder() {};

  /**
   * A run reached its final status on this server (executed, or ended without executing: denied,
   * expired, refused at its start).
   *
   * @param tier the run's tier, or {@code null} when it has none recorded
   * @param durationMs its execution's wall time, or {@code null} when it never executed
   */
  default void runEnded(RunStatus status, String tier, Long durationMs) {}

  /**
   * A sandbox for a run or a session was started (for the warm pool or on demand).
   *
   * @param ok whether it became ready
   * @param nanos how long the start took, to ready or to the failure
   */
  default void sandboxStarted(boolean ok, long nanos) {}

  /**
   * A run or a session got its fresh sandbox.
   *
   * @param waitNanos how long it waited for it (about 0 when one was ready)
   */
  default void sandboxTaken(PoolTake how, long waitNanos) {}

  /**
   * A run or a session asked for the package environment of its requirements.
   *
   * @param nanos how long it waited for it (the build, or the look-up of one already built)
   */
  default void environmentEnsured(EnvironmentOutcome outcome, long nanos) {}

  /** How a fresh sandbox was had. */
  enum PoolTake {
    /** One the warm pool had ready. */
    READY,
    /** None was ready: one was started for it, and it waited for that start. */
    STARTED,
    /** Not the pool's kind (another tier or other limits): one was started for it. */
    NOT_POOLED;

    /** The name in metrics: {@code ready}, {@code started}, {@code not_pooled}. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** What came of asking for a package environment. */
  enum EnvironmentOutcome {
    /** It was there already (built before, by this server or another). */
    REUSED,
    /** It was built now (or waited for, while this or another server built it). */
    BUILT,
    /** It could not be had (pip failed, the build timed out, no build sandbox). */
    FAILED;

    /** The name in metrics: {@code reused}, {@code built}, {@code failed}. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }
}

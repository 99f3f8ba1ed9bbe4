package dev.pysandbox.core;

import dev.pysandbox.api.MetricsRecorder;
import dev.pysandbox.api.RunStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core's one {@link MetricsRecorder}, handed to its parts when they are built, passing each
 * event on to whichever recorder a face set since ({@code SandboxService.recordMetrics}), so that
 * the parts need not know whether anyone records; a recorder that throws costs its event, never the
 * call that caused it.
 */
final class MetricsRelay implements MetricsRecorder {
  private static final Logger log = LoggerFactory.getLogger(MetricsRelay.class);

  private volatile MetricsRecorder to = MetricsRecorder.NONE;

  void to(MetricsRecorder recorder) {
    this.to = recorder == null ? MetricsRecorder.NONE : recorder;
  }

  @Override
  public void runEnded(RunStatus status, String tier, Long durationMs) {
    try {
      to.runEnded(status, tier, durationMs);
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  @Override
  public void sandboxStarted(boolean ok, long nanos) {
    try {
      to.sandboxStarted(ok, nanos);
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  @Override
  public void sandboxTaken(PoolTake how, long waitNanos) {
    try {
      to.sandboxTaken(how, waitNanos);
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  @Override
  public void environmentEnsured(EnvironmentOutcome outcome, long nanos) {
    try {
      to.environmentEnsured(outcome, nanos);
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  private static void dropped(RuntimeException e) {
    log.debug("a metrics recorder failed: {}", e.toString());
  }
}

package dev.pysandbox.core;

import dev.pysandbox.api.MetricsRecorder;
import dev.pysandbox.api.RunStatus;
import java.util.function.Consumer;
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
    relay(r -> r.runEnded(status, tier, durationMs));
  }

  @Override
  public void sandboxStarted(boolean ok, long nanos) {
    relay(r -> r.sandboxStarted(ok, nanos));
  }

  @Override
  public void sandboxTaken(PoolTake how, long waitNanos) {
    relay(r -> r.sandboxTaken(how, waitNanos));
  }

  @Override
  public void environmentEnsured(EnvironmentOutcome outcome, long nanos) {
    relay(r -> r.environmentEnsured(outcome, nanos));
  }

  /** Passes one event on; a recorder that throws costs the event, never its caller. */
  private void relay(Consumer<MetricsRecorder> event) {
    try {
      event.accept(to);
    } catch (RuntimeException e) {
      log.debug("a metrics recorder failed: {}", e.toString());
    }
  }
}

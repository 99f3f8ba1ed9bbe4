package dev.pysandbox.core.sandboxes;

import dev.pysandbox.backend.KillReport;
import dev.pysandbox.backend.Sandbox;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How killing a sandbox ended, waited for: with a report (and how many processes were left), or
 * with the reason it could not be confirmed, which is logged once here and said in the run's
 * message instead of "the sandbox was killed".
 *
 * @param report the backend's report, or null when the kill failed
 * @param failure why the kill was not confirmed, or null when it was
 */
public record KillOutcome(KillReport report, String failure) {
  private static final Logger log = LoggerFactory.getLogger(KillOutcome.class);
  static final long WAIT_SECONDS = 10;

  /** Kills the sandbox and waits at most {@value #WAIT_SECONDS} s for the kill to be confirmed. */
  public static KillOutcome kill(Sandbox sandbox, String reason) {
    String failure;
    Throwable cause = null;
    try {
      return new KillOutcome(sandbox.kill(reason).get(WAIT_SECONDS, TimeUnit.SECONDS), null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure = "the server was interrupted while waiting for it";
    } catch (ExecutionException e) {
      cause = e.getCause() == null ? e : e.getCause();
      failure = cause.getMessage() == null ? cause.toString() : cause.getMessage();
    } catch (TimeoutException e) {
      failure = "it was not confirmed within " + WAIT_SECONDS + " s";
    }
    log.warn("killing sandbox {} ({}) failed: {}", sandbox.id(), reason, failure, cause);
    return new KillOutcome(null, failure);
  }

  public boolean confirmed() {
    return failure == null;
  }

  /**
   * What follows "the sandbox was killed" in a message: "" or how many processes were left; only
   * for a confirmed kill.
   */
  public String leftBehind() {
    return report == null
        ? ""
        : report.leftBehind() == 0
            ? " and no process of it is left"
            : " but " + report.leftBehind() + " of its processes could not be killed";
  }
}

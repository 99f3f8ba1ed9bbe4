package dev.pysandbox.core.sandboxes;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * The last failed start of a sandbox with the pool's spec (the pool's own or one {@link #take()}
 * tried), while none has succeeded since.
 *
 * @param message why it failed
 * @param at when it failed
 * @param consecutive starts that failed in a row, at least 1
 * @param retryAt when the pool tries again, or null when it cannot schedule one (shutting down)
 * @param cause what the backend reported
 */
public record StartFailure(
    String message, Instant at, int consecutive, Instant retryAt, Throwable cause) {
  /** "warm pool: the last 3 sandbox starts failed, last at ...: ...; retrying in 2 s". */
  public String describe(Instant now) {
    String retry = "not retrying";
    if (retryAt != null) {
      long ms = Math.max(0, Duration.between(now, retryAt).toMillis());
      retry =
          "retrying in "
              + (ms < 10_000 ? String.format(Locale.ROOT, "%.1f", ms / 1000.0) : ms / 1000)
              + " s";
    }
    return (consecutive == 1
            ? "warm pool: the last sandbox start failed"
            : "warm pool: the last " + consecutive + " sandbox starts failed")
        + ", last at "
        + at
        + ": "
        + message
        + "; "
        + retry;
  }
}

package dev.pysandbox;

import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waits in tests for an observable state instead of sleeping for a guessed time. A wait that runs
 * out fails naming what it waited for and the last value it saw, so that the failure says why.
 */
public final class Await {
  /** How long a wait may take before it fails: long enough for a loaded 2-core machine. */
  public static final Duration DEFAULT = Duration.ofSeconds(15);

  private static final long POLL_MILLIS = 20;

  private Await() {}

  /** A look that may throw (an HTTP call, a file read); what it throws ends the wait at once. */
  @FunctionalInterface
  public interface Look<T> {
    T get() throws Exception;
  }

  /** As {@link #until(String, Supplier, Predicate)}, for a look that may throw. */
  public static <T> T untilChecked(String what, Look<T> look, Predicate<? super T> ok)
      throws InterruptedException {
    return untilChecked(what, DEFAULT, look, ok);
  }

  /**
   * As {@link #untilChecked(String, Look, Predicate)}, at most {@code limit} (for looks that take
   * long themselves, such as one that starts a JVM).
   */
  public static <T> T untilChecked(
      String what, Duration limit, Look<T> look, Predicate<? super T> ok)
      throws InterruptedException {
    return until(
        what,
        limit,
        () -> {
          try {
            return look.get();
          } catch (RuntimeException e) {
            throw e;
          } catch (Exception e) {
            throw new IllegalStateException("while waiting for: " + what, e);
          }
        },
        ok);
  }

  /**
   * Polls {@code value} until {@code ok} accepts it, at most {@link #DEFAULT}.
   *
   * @param what the condition in words, e.g. "session busy is busy"
   * @return the value that was accepted
   */
  public static <T> T until(String what, Supplier<T> value, Predicate<? super T> ok)
      throws InterruptedException {
    return until(what, DEFAULT, value, ok);
  }

  /** Polls {@code value} until {@code ok} accepts it, at most {@code limit}. */
  public static <T> T until(String what, Duration limit, Supplier<T> value, Predicate<? super T> ok)
      throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + limit.toNanos();
    while (true) {
      T seen = value.get();
      if (ok.test(seen)) {
        return seen;
      }
      if (System.nanoTime() - deadline > 0) {
        return fail(
            "waited %d ms for: %s; last value seen: %s",
            (System.nanoTime() - start) / 1_000_000, what, seen);
      }
      Thread.sleep(POLL_MILLIS);
    }
  }
}

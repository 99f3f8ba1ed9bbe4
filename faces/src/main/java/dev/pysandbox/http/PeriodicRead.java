package dev.pysandbox.http;

import dev.pysandbox.util.TimeSource;
import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * A value read from its source at most once a period, however often it is asked for: the source is
 * slow or shared (the core's readiness for a load balancer polling {@code /ready}, the tenants
 * holding keys for every session a server starts). A read that fails gives what {@code failed}
 * makes of the failure and the last value (logged there: the last value standing, or an answer that
 * fails closed); that too stands for the period, so a failing source is not asked on every call.
 * Public for the CLI's {@code serve}, which reaches no lower package of ours.
 *
 * @param <T> the value
 */
public final class PeriodicRead<T> implements Supplier<T> {
  private final long periodNanos;
  private final TimeSource time;
  private final Supplier<T> source;
  private final BiFunction<RuntimeException, T, T> failed;
  private T value;
  private long readAt;
  private boolean read;

  /**
   * @param failed what stands when a read fails, from the failure and the last value (null before
   *     the first read)
   */
  public PeriodicRead(
      Duration period,
      TimeSource time,
      Supplier<T> source,
      BiFunction<RuntimeException, T, T> failed) {
    this.periodNanos = period.toNanos();
    this.time = time;
    this.source = source;
    this.failed = failed;
  }

  @Override
  public synchronized T get() {
    long now = time.nanoTime();
    if (!read || now - readAt >= periodNanos) {
      try {
        value = source.get();
      } catch (RuntimeException e) {
        value = failed.apply(e, value);
      }
      read = true;
      readAt = now;
    }
    return value;
  }
}

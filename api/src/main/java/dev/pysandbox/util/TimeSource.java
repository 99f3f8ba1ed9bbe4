package dev.pysandbox.util;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The server's one source of time: a {@link Clock} for the instants it records (created, finished,
 * last used, closed) and a monotonic {@link #nanoTime()} for what it measures and waits out
 * (timeouts, grace periods, polling, TTL, retry back-off), as Caffeine's {@code Ticker} does.
 * Everything with a deadline takes one, so that a test moves time on instead of sleeping.
 */
public abstract class TimeSource extends Clock {
  private static final TimeSource SYSTEM = new SystemTime(Clock.systemUTC());

  /** Nanoseconds from an arbitrary origin; only differences mean anything. */
  public abstract long nanoTime();

  /** Real time: {@link Clock#systemUTC()} and {@link System#nanoTime()}. */
  public static TimeSource system() {
    return SYSTEM;
  }

  /** Real monotonic time with instants from {@code clock} (a fixed clock in tests of records). */
  public static TimeSource of(Clock clock) {
    return clock instanceof TimeSource t ? t : new SystemTime(clock);
  }

  /** Milliseconds left until {@code deadlineNanos} (of {@link #nanoTime()}), never negative. */
  public final long millisUntil(long deadlineNanos) {
    return Math.max(0, (deadlineNanos - nanoTime()) / 1_000_000);
  }

  private static final class SystemTime extends TimeSource {
    private final Clock clock;

    SystemTime(Clock clock) {
      this.clock = clock;
    }

    @Override
    public long nanoTime() {
      return System.nanoTime();
    }

    @Override
    public Instant instant() {
      return clock.instant();
    }

    @Override
    public long millis() {
      return clock.millis();
    }

    @Override
    public ZoneId getZone() {
      return clock.getZone();
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return zone.equals(clock.getZone()) ? this : new SystemTime(clock.withZone(zone));
    }
  }

  /** For {@link Clock}'s contract: every source here is UTC unless built on another zone. */
  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }
}

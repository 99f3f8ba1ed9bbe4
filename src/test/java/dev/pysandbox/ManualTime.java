package dev.pysandbox;

import dev.pysandbox.util.TimeSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Time that moves only when a test says so: the instant and the monotonic nanoseconds advance
 * together. Code that polls against a deadline sees it pass at its next poll, without the test
 * sleeping out the timeout, the grace period or the TTL.
 */
public final class ManualTime extends TimeSource {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final Instant origin;

  public ManualTime(Instant origin) {
    this.origin = origin;
  }

  public ManualTime() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  public void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  @Override
  public long nanoTime() {
    return nanos.get();
  }

  @Override
  public Instant instant() {
    return origin.plusNanos(nanos.get() - 1_000_000_000L);
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}

package dev.pysandbox;

import dev.pysandbox.util.TimeSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Time that moves only when a test says so. {@link #frozen} moves the instants and the monotonic
 * nanoseconds together: code that polls against a deadline (a timeout, a grace period) sees it pass
 * at its next poll, without the test sleeping it out. {@link #wallOnly} moves only the instants
 * (TTL, expiry, recorded times) and lets deadlines run in real time, for tests whose runs must
 * still time out on their own.
 */
public final class ManualTime extends TimeSource {
  private final AtomicLong moved = new AtomicLong();
  private final Instant origin;
  private final boolean frozen;
  private final long realOrigin = System.nanoTime();
  private final Map<Thread, AtomicLong> reads = new ConcurrentHashMap<>();

  private ManualTime(Instant origin, boolean frozen) {
    this.origin = origin;
    this.frozen = frozen;
  }

  /** {@link #frozen} from {@code origin}. */
  public ManualTime(Instant origin) {
    this(origin, true);
  }

  /** {@link #frozen} from 2026-01-01T00:00:00Z. */
  public ManualTime() {
    this(Instant.parse("2026-01-01T00:00:00Z"), true);
  }

  /** Instants and deadlines both move only by {@link #advance}. */
  public static ManualTime frozen(Instant origin) {
    return new ManualTime(origin, true);
  }

  /** Instants move only by {@link #advance}; the monotonic time is real and never moved. */
  public static ManualTime wallOnly(Instant origin) {
    return new ManualTime(origin, false);
  }

  public void advance(Duration d) {
    moved.addAndGet(d.toNanos());
  }

  /**
   * How often {@code thread} has read the monotonic time: a test that must let code look at a
   * deadline (and see it not yet passed) waits for its looks instead of sleeping a guess.
   */
  public long readsBy(Thread thread) {
    AtomicLong n = reads.get(thread);
    return n == null ? 0 : n.get();
  }

  @Override
  public long nanoTime() {
    reads.computeIfAbsent(Thread.currentThread(), t -> new AtomicLong()).incrementAndGet();
    return frozen ? moved.get() : System.nanoTime() - realOrigin;
  }

  @Override
  public Instant instant() {
    return origin.plusNanos(moved.get());
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}

package dev.pysandbox.http;

import dev.pysandbox.util.TimeSource;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A token bucket per API key: {@code burst} requests at once, refilled at {@code perSecond}. Keys
 * are few (one bucket each, kept for the life of the server); time comes from a {@link TimeSource}
 * so that tests move it instead of sleeping.
 */
final class RateLimiter {
  private final double perSecond;
  private final int burst;
  private final TimeSource time;
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

  /**
   * @param perSecond sustained rate; 0 for no limit
   */
  RateLimiter(double perSecond, int burst, TimeSource time) {
    this.perSecond = perSecond;
    this.burst = burst;
    this.time = time;
  }

  /**
   * Takes a token for {@code key}.
   *
   * @return 0 when the request may go on; else the nanoseconds until a token is there
   */
  long acquire(String key) {
    if (perSecond <= 0) {
      return 0;
    }
    return buckets.computeIfAbsent(key, k -> new Bucket(burst, time.nanoTime())).take();
  }

  double perSecond() {
    return perSecond;
  }

  int burst() {
    return burst;
  }

  private final class Bucket {
    private double tokens;
    private long refilledAt;

    Bucket(double tokens, long now) {
      this.tokens = tokens;
      this.refilledAt = now;
    }

    synchronized long take() {
      long now = time.nanoTime();
      tokens = Math.min(burst, tokens + (now - refilledAt) / 1e9 * perSecond);
      refilledAt = now;
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      return Math.max(1, (long) Math.ceil((1 - tokens) / perSecond * 1e9));
    }
  }
}

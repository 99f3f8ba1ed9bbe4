package dev.pysandbox.http;

import dev.pysandbox.util.TimeSource;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Token buckets, one per caller: {@code burst} requests at once, refilled at {@code perSecond}. A
 * caller is an API key ({@link #forKey}) or, for requests without a valid key, the client's address
 * ({@link #forAddress}; an IPv6 address by its /64, which one host can fill with addresses of its
 * own). Time comes from a {@link TimeSource} so that tests move it instead of sleeping.
 *
 * <p>Memory is bounded: at most {@code maxBuckets} callers are remembered, the least recently seen
 * forgotten first (a forgotten caller starts again with a full bucket, as a new one would, so only
 * a caller that could spread itself over that many addresses gains by it, and it could anyway). One
 * lock guards the table; each request holds it for a lookup and a few arithmetic operations.
 */
final class RateLimiter {
  /** Callers remembered at most: ten thousand buckets are about a megabyte. */
  static final int MAX_BUCKETS = 10_000;

  private final double perSecond;
  private final int burst;
  private final TimeSource time;
  private final Map<String, Bucket> buckets;

  /**
   * @param perSecond sustained rate; 0 for no limit
   */
  RateLimiter(double perSecond, int burst, TimeSource time) {
    this(perSecond, burst, time, MAX_BUCKETS);
  }

  RateLimiter(double perSecond, int burst, TimeSource time, int maxBuckets) {
    this.perSecond = perSecond;
    this.burst = burst;
    this.time = time;
    this.buckets =
        new LinkedHashMap<>(64, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Bucket> eldest) {
            return size() > maxBuckets;
          }
        };
  }

  /** The bucket of an API key, by its id. */
  static String forKey(String keyId) {
    return "key " + keyId;
  }

  /**
   * The bucket of a client address (as the connection gives it, never a header the client chose):
   * an IPv4 address as it is, an IPv6 one by its /64.
   */
  static String forAddress(String address) {
    try {
      if (address != null && address.indexOf(':') >= 0) {
        InetAddress a = InetAddress.getByName(address); // a literal: no lookup
        if (a instanceof Inet6Address) {
          byte[] b = a.getAddress();
          StringBuilder prefix = new StringBuilder("address ");
          for (int i = 0; i < 8; i += 2) {
            prefix.append(Integer.toHexString(((b[i] & 0xff) << 8) | (b[i + 1] & 0xff)));
            prefix.append(':');
          }
          return prefix.append(":/64").toString(); // e.g. "address 2001:db8:0:0::/64"
        }
      }
    } catch (UnknownHostException e) {
      // not a literal: keep it as given
    }
    return "address " + address;
  }

  /**
   * Takes a token from {@code bucket}.
   *
   * @return 0 when the request may go on; else the nanoseconds until a token is there
   */
  long acquire(String bucket) {
    if (perSecond <= 0) {
      return 0;
    }
    synchronized (buckets) {
      return buckets.computeIfAbsent(bucket, k -> new Bucket(burst, time.nanoTime())).take();
    }
  }

  /** Callers remembered now. */
  int size() {
    synchronized (buckets) {
      return buckets.size();
    }
  }

  double perSecond() {
    return perSecond;
  }

  int burst() {
    return burst;
  }

  /** Guarded by the table's lock. */
  private final class Bucket {
    private double tokens;
    private long refilledAt;

    Bucket(double tokens, long now) {
      this.tokens = tokens;
      this.refilledAt = now;
    }

    private void refill() {
      long now = time.nanoTime();
      tokens = Math.min(burst, tokens + (now - refilledAt) / 1e9 * perSecond);
      refilledAt = now;
    }

    long take() {
      refill();
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      return Math.max(1, (long) Math.ceil((1 - tokens) / perSecond * 1e9));
    }
  }
}

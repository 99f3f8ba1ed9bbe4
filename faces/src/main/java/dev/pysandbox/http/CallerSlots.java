package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.LongCalls;
import dev.pysandbox.api.PysandboxException;
import java.util.HashMap;
import java.util.Map;

/**
 * How many requests each caller (an API key, or an address without a valid key — the rate limiter's
 * buckets) has in flight, and how many of them are long calls ({@link LongCalls}: waits, downloads,
 * uploads), each under its cap, and how many keyed requests the server has in flight altogether
 * (under {@code total}, which leaves threads for the health checks and the refusals). A rate limit
 * bounds how fast requests come, not how long they stay: without these, one key under its rate
 * limit could hold every server thread with requests that wait on a slow peer or on the clock.
 *
 * <p>A caller with nothing in flight is forgotten, so memory is bounded by the requests in flight.
 * One lock; each request holds it twice, for a counter each time.
 */
final class CallerSlots {
  /** Seconds a refused caller is told to wait ({@code Retry-After}): a slot frees when one ends. */
  static final int RETRY_AFTER_SECONDS = 1;

  private final int perCaller;
  private final int longPerCaller;
  private final int total;
  private final Map<String, int[]> held = new HashMap<>(); // bucket -> {requests, long calls}
  private int inFlight;

  /**
   * @param perCaller requests one caller may have in flight ({@code http_max_requests_per_key})
   * @param longPerCaller of them, long calls ({@code http_max_long_calls_per_key})
   * @param total keyed requests in flight on the whole server
   */
  CallerSlots(int perCaller, int longPerCaller, int total) {
    this.perCaller = perCaller;
    this.longPerCaller = longPerCaller;
    this.total = total;
  }

  /**
   * The caps {@code config} sets, under {@code total}. With {@code http_auth=none} (loopback only)
   * every caller is the one tenant, local: there is no other tenant to keep a share for, and its
   * bursts of quick calls must pass, so only its long calls are capped (and the total still keeps
   * threads for /health).
   */
  static CallerSlots of(dev.pysandbox.config.PysandboxConfig config, int total) {
    return new CallerSlots(
        config.httpAuthKeys() ? config.httpMaxRequestsPerKey() : total,
        config.httpMaxLongCallsPerKey(),
        total);
  }

  /** Why a request was not let in: its message, and the code it is answered with. */
  record Refusal(ErrorCode code, String message) {}

  /**
   * Counts a request of {@code bucket} in.
   *
   * @return null when it may go on (call {@link #exit} once it ends), else why not
   */
  synchronized Refusal enter(String bucket, String who) {
    int[] h = held.computeIfAbsent(bucket, b -> new int[2]);
    if (h[0] >= perCaller) {
      forgetIfIdle(bucket, h);
      return new Refusal(
          ErrorCode.RATE_LIMITED,
          who
              + " has "
              + h[0]
              + " requests in flight, its most (http_max_requests_per_key "
              + perCaller
              + "); retry once one has ended");
    }
    if (inFlight >= total) {
      forgetIfIdle(bucket, h);
      return new Refusal(
          ErrorCode.BACKEND_UNAVAILABLE,
          "the server has "
              + inFlight
              + " requests in flight, as many as it takes (http_max_requests_per_key keeps each"
              + " caller's share); retry shortly, or on another server");
    }
    h[0]++;
    inFlight++;
    return null;
  }

  synchronized void exit(String bucket) {
    int[] h = held.get(bucket);
    if (h != null && h[0] > 0) {
      h[0]--;
      inFlight--;
      forgetIfIdle(bucket, h);
    }
  }

  /** The long calls of one caller, as a request carries them ({@link LongCalls#ATTRIBUTE}). */
  LongCalls longCalls(String bucket, String who) {
    return (kind, operation) -> enterLong(bucket, who, kind, operation);
  }

  private LongCalls.Slot enterLong(
      String bucket, String who, LongCalls.Kind kind, String operation) {
    synchronized (this) {
      int[] h = held.computeIfAbsent(bucket, b -> new int[2]);
      if (h[1] >= longPerCaller) {
        forgetIfIdle(bucket, h);
        throw new PysandboxException(
            ErrorCode.RATE_LIMITED,
            who
                + " has "
                + h[1]
                + " long calls in flight (waits, downloads, uploads), its most"
                + " (http_max_long_calls_per_key "
                + longPerCaller
                + "), so this "
                + operation
                + " ("
                + kind.name().toLowerCase(java.util.Locale.ROOT)
                + ") was not started; retry once one has ended");
      }
      h[1]++;
    }
    boolean[] closed = {false};
    return () -> {
      synchronized (this) {
        if (closed[0]) {
          return;
        }
        closed[0] = true;
        int[] h = held.get(bucket);
        if (h != null && h[1] > 0) {
          h[1]--;
          forgetIfIdle(bucket, h);
        }
      }
    };
  }

  private void forgetIfIdle(String bucket, int[] h) {
    if (h[0] == 0 && h[1] == 0) {
      held.remove(bucket);
    }
  }

  /** Requests in flight of {@code bucket} (for tests). */
  synchronized int requests(String bucket) {
    int[] h = held.get(bucket);
    return h == null ? 0 : h[0];
  }

  synchronized int longCalls(String bucket) {
    int[] h = held.get(bucket);
    return h == null ? 0 : h[1];
  }

  int perCaller() {
    return perCaller;
  }
}

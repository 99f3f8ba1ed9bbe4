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
  private static final int REQUESTS = 0;
  private static final int LONG_CALLS = 1;

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
    if (!take(bucket, REQUESTS, perCaller)) {
      return new Refusal(
          ErrorCode.RATE_LIMITED,
          atCap(who, perCaller, "requests in flight", "http_max_requests_per_key")
              + "; retry once one has ended");
    }
    if (inFlight >= total) {
      release(bucket, REQUESTS);
      return new Refusal(
          ErrorCode.BACKEND_UNAVAILABLE,
          "the server has "
              + inFlight
              + " requests in flight, as many as it takes (http_max_requests_per_key keeps each"
              + " caller's share); retry shortly, or on another server");
    }
    inFlight++;
    return null;
  }

  synchronized void exit(String bucket) {
    if (release(bucket, REQUESTS)) {
      inFlight--;
    }
  }

  /** The long calls of one caller, as a request carries them ({@link LongCalls#ATTRIBUTE}). */
  LongCalls longCalls(String bucket, String who) {
    return (kind, operation) -> enterLong(bucket, who, kind, operation);
  }

  private LongCalls.Slot enterLong(
      String bucket, String who, LongCalls.Kind kind, String operation) {
    synchronized (this) {
      if (!take(bucket, LONG_CALLS, longPerCaller)) {
        throw new PysandboxException(
            ErrorCode.RATE_LIMITED,
            atCap(
                    who,
                    longPerCaller,
                    "long calls in flight (waits, downloads, uploads)",
                    "http_max_long_calls_per_key")
                + ", so this "
                + operation
                + " ("
                + kind.name().toLowerCase(java.util.Locale.ROOT)
                + ") was not started; retry once one has ended");
      }
    }
    boolean[] closed = {false};
    return () -> {
      synchronized (this) {
        if (!closed[0]) {
          closed[0] = true;
          release(bucket, LONG_CALLS);
        }
      }
    };
  }

  /** What a caller at one of its caps is told first: "who has 4 requests in flight, its most…". */
  private static String atCap(String who, int cap, String what, String setting) {
    return who + " has " + cap + " " + what + ", its most (" + setting + " " + cap + ")";
  }

  /**
   * Counts one in of {@code bucket}'s counter {@code which} if it is under {@code cap}: a counter
   * only grows under its cap, so one refused stands at the cap. A refused caller is not kept.
   */
  private boolean take(String bucket, int which, int cap) {
    int[] h = held.computeIfAbsent(bucket, b -> new int[2]);
    if (h[which] >= cap) {
      forgetIfIdle(bucket, h);
      return false;
    }
    h[which]++;
    return true;
  }

  /** Counts one out of {@code bucket}'s counter {@code which}: false when it held none. */
  private boolean release(String bucket, int which) {
    int[] h = held.get(bucket);
    if (h == null || h[which] == 0) {
      return false;
    }
    h[which]--;
    forgetIfIdle(bucket, h);
    return true;
  }

  private void forgetIfIdle(String bucket, int[] h) {
    if (h[REQUESTS] == 0 && h[LONG_CALLS] == 0) {
      held.remove(bucket);
    }
  }

  /** Requests in flight of {@code bucket} (for tests). */
  synchronized int requests(String bucket) {
    return held(bucket, REQUESTS);
  }

  synchronized int longCalls(String bucket) {
    return held(bucket, LONG_CALLS);
  }

  private int held(String bucket, int which) {
    int[] h = held.get(bucket);
    return h == null ? 0 : h[which];
  }

  int perCaller() {
    return perCaller;
  }
}

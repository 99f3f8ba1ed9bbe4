package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.LongCalls;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.Tenants;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Who is calling: every request but the health checks (and the paths {@link HttpFace#withoutKey}
 * names) presents an API key ({@code Authorization: Bearer KEY} or {@code X-API-Key: KEY}); a
 * missing, unknown or revoked key gets 401 with {@code WWW-Authenticate: Bearer}. Requests are
 * rate-limited (429 with {@code Retry-After}) per caller: a known key's by the key, every other (no
 * key, a bad key, or any request with {@code http_auth=none}) by the client's address, so that
 * neither one key's flood nor one address's reaches anyone else. The caller and tenant are put on
 * the request ({@link HttpFace#CALLER_ATTRIBUTE}, {@link HttpFace#TENANT_ATTRIBUTE}) and in the
 * logging context for whatever answers it. With {@code http_auth=none} (loopback only) every caller
 * is the tenant {@code local}.
 */
final class AuthFilter extends HttpFilter {
  private static final long serialVersionUID = 1L;
  private static final Logger log = LoggerFactory.getLogger(AuthFilter.class);

  /** The caller of every request when no key is asked for. */
  static final Caller LOCAL = new Caller("none", Tenants.LOCAL);

  private final transient KeyCheck keys;
  private final boolean keysRequired;
  private final transient RateLimiter limiter;
  private final transient Set<String> withoutKey;
  private final transient CallerSlots slots;

  /**
   * @param withoutKey paths whose GET and HEAD, like the health checks', need no key (documents
   *     that show nothing of any tenant)
   * @param slots the caps on each caller's requests in flight
   */
  AuthFilter(
      KeyCheck keys,
      boolean keysRequired,
      RateLimiter limiter,
      Set<String> withoutKey,
      CallerSlots slots) {
    this.keys = keys;
    this.keysRequired = keysRequired;
    this.limiter = limiter;
    this.withoutKey = Set.copyOf(withoutKey);
    this.slots = slots;
  }

  static boolean isHealthCheck(HttpServletRequest request) {
    String path = request.getRequestURI();
    String method = request.getMethod();
    return (path.equals("/health") || path.equals("/ready"))
        && (method.equals("GET") || method.equals("HEAD"));
  }

  private boolean isWithoutKey(HttpServletRequest request) {
    String method = request.getMethod();
    return (method.equals("GET") || method.equals("HEAD"))
        && withoutKey.contains(request.getRequestURI());
  }

  @Override
  protected void doFilter(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (isHealthCheck(request) || isWithoutKey(request)) {
      chain.doFilter(request, response);
      return;
    }
    String address = RateLimiter.forAddress(request.getRemoteAddr());
    Caller caller;
    String bucket;
    String who;
    if (keysRequired) {
      String key = presentedKey(request);
      Optional<Caller> known = Optional.empty();
      if (key != null) {
        try {
          known = keys.check(key);
        } catch (PysandboxException e) {
          ErrorBodies.drainBody(request, response);
          ErrorBodies.send(response, e);
          return;
        }
      }
      if (known.isEmpty()) {
        // Attempts without a valid key are limited by where they come from. The slot is taken
        // first, so that draining the body of a refused request is bounded per address too.
        String anonymous = address + " (requests without a valid key)";
        if (overSlots(response, address, anonymous)) {
          return;
        }
        try {
          if (!overLimit(request, response, address, anonymous)) {
            unauthenticated(
                request,
                response,
                key == null
                    ? "no API key: send Authorization: Bearer <key> or X-API-Key: <key>"
                    : "the API key is not valid (unknown, revoked or malformed)");
          }
        } finally {
          slots.exit(address);
        }
        return;
      }
      caller = known.get();
      bucket = RateLimiter.forKey(caller.keyId());
      who = "API key " + caller.keyId();
    } else {
      caller = LOCAL;
      bucket = address;
      who = address;
    }
    // An MCP client's GET stream holds no thread (it is asynchronous; a write it blocks is cut
    // off by SlowPeerGuard) and lives as long as its session: counted, it would use up the
    // slots of a client with a few sessions.
    boolean counted = !isMcpStream(request);
    if (counted && overSlots(response, bucket, who)) {
      return;
    }
    try {
      if (overLimit(request, response, bucket, bucket)) {
        return;
      }
      request.setAttribute(HttpFace.CALLER_ATTRIBUTE, caller);
      request.setAttribute(HttpFace.TENANT_ATTRIBUTE, caller.tenant());
      request.setAttribute(LongCalls.ATTRIBUTE, slots.longCalls(bucket, who));
      MDC.put("tenant", caller.tenant());
      chain.doFilter(request, response);
    } finally {
      if (counted) {
        exitWhenDone(request, bucket);
      }
    }
  }

  private static boolean isMcpStream(HttpServletRequest request) {
    return "GET".equals(request.getMethod())
        && dev.pysandbox.mcp.McpHttpEndpoint.PATH.equals(request.getRequestURI());
  }

  /**
   * Takes one of the caller's slots; when it has none left (or the server none at all), answers 429
   * (503) with {@code Retry-After}. The body is not read: the connection closes instead, so a
   * refused slow body holds no thread either.
   *
   * @return true when the request was refused
   */
  private boolean overSlots(HttpServletResponse response, String bucket, String who)
      throws IOException {
    CallerSlots.Refusal refusal = slots.enter(bucket, who);
    if (refusal == null) {
      return false;
    }
    response.setHeader("Retry-After", Integer.toString(CallerSlots.RETRY_AFTER_SECONDS));
    response.setHeader("Connection", "close");
    ErrorBodies.send(response, refusal.code(), refusal.message());
    log.debug("no slot for {}: {}", bucket, refusal.message());
    return true;
  }

  /**
   * Gives the request's slot back when its answer is complete (after its stream, if it streams).
   */
  private void exitWhenDone(HttpServletRequest request, String bucket) {
    if (!request.isAsyncStarted()) {
      slots.exit(bucket);
      return;
    }
    request.getAsyncContext().addListener(new AsyncDone(() -> slots.exit(bucket)));
  }

  /**
   * Takes a token from {@code bucket}; when there is none, answers 429 with {@code Retry-After}.
   *
   * @return true when the request was refused
   */
  private boolean overLimit(
      HttpServletRequest request, HttpServletResponse response, String bucket, String who)
      throws IOException {
    long waitNanos = limiter.acquire(bucket);
    if (waitNanos == 0) {
      return false;
    }
    long seconds = Math.max(1, (waitNanos + 999_999_999) / 1_000_000_000);
    response.setHeader("Retry-After", Long.toString(seconds));
    ErrorBodies.drainBody(request, response);
    ErrorBodies.send(
        response,
        ErrorCode.RATE_LIMITED,
        who
            + " is over the rate limit of "
            + limiter.perSecond()
            + " requests per second (rate_limit_per_second; burst rate_limit_burst "
            + limiter.burst()
            + "); retry in "
            + seconds
            + " s");
    log.debug("rate limited {}", bucket);
    return true;
  }

  /**
   * 401, after reading what is left of the body: an answer sent over an unread body makes the
   * server close the connection, which a client that reuses it sees as a request with no answer.
   */
  private static void unauthenticated(
      HttpServletRequest request, HttpServletResponse response, String message) throws IOException {
    ErrorBodies.drainBody(request, response);
    response.setHeader("WWW-Authenticate", "Bearer");
    ErrorBodies.send(response, ErrorCode.UNAUTHENTICATED, message);
  }

  /** The key from {@code Authorization: Bearer} or else {@code X-API-Key}; null when neither. */
  static String presentedKey(HttpServletRequest request) {
    String authorization = request.getHeader("Authorization");
    if (authorization != null) {
      String a = authorization.strip();
      if (a.length() > 7 && a.substring(0, 7).toLowerCase(Locale.ROOT).equals("bearer ")) {
        String key = a.substring(7).strip();
        if (!key.isEmpty()) {
          return key;
        }
      }
    }
    String apiKey = request.getHeader("X-API-Key");
    return apiKey == null || apiKey.isBlank() ? null : apiKey.strip();
  }
}

package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.util.RandomIds;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The first filter every request passes: gives it an id ({@code X-Request-Id}, kept from the client
 * when it is a short safe token), puts the id in the logging context, counts it in flight, refuses
 * it once the server is stopping, and measures it (one metrics sample and, at DEBUG, one log line
 * each, when the answer is complete — after the stream for an answer that streams).
 */
final class RequestFilter extends HttpFilter {
  private static final long serialVersionUID = 1L;
  private static final Logger log = LoggerFactory.getLogger(RequestFilter.class);
  static final String REQUEST_ID_HEADER = "X-Request-Id";
  private static final Pattern SAFE_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

  private final transient InFlight inFlight;
  private final transient HttpMetrics metrics;
  private volatile boolean stopping;

  RequestFilter(InFlight inFlight, HttpMetrics metrics) {
    this.inFlight = inFlight;
    this.metrics = metrics;
  }

  /** From now on every new request is answered 503. */
  void stopTakingRequests() {
    stopping = true;
  }

  @Override
  protected void doFilter(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    long start = System.nanoTime();
    String incoming = request.getHeader(REQUEST_ID_HEADER);
    String id = incoming != null && SAFE_ID.matcher(incoming).matches() ? incoming : newId();
    request.setAttribute(HttpFace.REQUEST_ID_ATTRIBUTE, id);
    response.setHeader(REQUEST_ID_HEADER, id);
    boolean counted = !isListeningStream(request);
    if (counted) {
      inFlight.enter();
    }
    MDC.put("request_id", id);
    boolean async = false;
    try {
      if (stopping) {
        response.setHeader("Connection", "close");
        ErrorBodies.send(
            response, ErrorCode.BACKEND_UNAVAILABLE, "the server is stopping; try another one");
      } else {
        chain.doFilter(request, response);
      }
      if (request.isAsyncStarted()) {
        async = true;
        request
            .getAsyncContext()
            .addListener(new AsyncDone(() -> done(request, response, start, counted)));
      }
    } finally {
      if (!async) {
        done(request, response, start, counted);
      }
      MDC.remove("request_id");
      MDC.remove("tenant");
    }
  }

  private void done(
      HttpServletRequest request, HttpServletResponse response, long start, boolean counted) {
    if (counted) {
      inFlight.exit();
    }
    long nanos = System.nanoTime() - start;
    String route = route(request);
    metrics.record(request.getMethod(), route, response.getStatus(), nanos);
    if (log.isDebugEnabled()) {
      log.debug(
          "{} {} -> {} in {} ms (request {}, tenant {})",
          request.getMethod(),
          request.getRequestURI(),
          response.getStatus(),
          nanos / 1_000_000,
          request.getAttribute(HttpFace.REQUEST_ID_ATTRIBUTE),
          request.getAttribute(HttpFace.TENANT_ATTRIBUTE));
    }
  }

  /**
   * The template of the route that answered, as its servlet named it ({@link
   * HttpFace#ROUTE_ATTRIBUTE}, e.g. {@code /api/v1/runs/{run_id}}), else the servlet mapping
   * ({@code /mcp}); never the raw path.
   */
  static String route(HttpServletRequest request) {
    if (request.getAttribute(HttpFace.ROUTE_ATTRIBUTE) instanceof String template) {
      return template;
    }
    String pattern = request.getHttpServletMapping().getPattern();
    return pattern == null || pattern.equals("/") || pattern.isEmpty() ? "unmatched" : pattern;
  }

  private static boolean isListeningStream(HttpServletRequest request) {
    return "GET".equals(request.getMethod())
        && dev.pysandbox.mcp.McpHttpEndpoint.PATH.equals(request.getRequestURI());
  }

  private static String newId() {
    return RandomIds.hex(8);
  }
}

package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Map;

/**
 * The largest request body each route takes: a declared {@code Content-Length} over it is refused
 * with 413 before the body is read; a body without one (chunked) is cut off where it passes the
 * limit, with 413 when the servlet lets the failure through. The MCP servlet enforces its own limit
 * on bodies without a length (the SDK's), so it only gets the first check.
 */
final class BodyLimitFilter extends HttpFilter {
  private static final long serialVersionUID = 1L;

  /** For routes that name no limit (health, metrics, unknown paths): they read no body. */
  static final long DEFAULT_LIMIT = 64 * 1024;

  private final transient Map<String, Long> limits;
  private final transient Map<String, Boolean> countsItself;

  /**
   * @param limits bytes by servlet mapping pattern ({@code /mcp}, {@code /api/v1/*})
   * @param countsItself patterns whose servlet bounds a body without a length itself
   */
  BodyLimitFilter(Map<String, Long> limits, Map<String, Boolean> countsItself) {
    this.limits = Map.copyOf(limits);
    this.countsItself = Map.copyOf(countsItself);
  }

  @Override
  protected void doFilter(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    String pattern = request.getHttpServletMapping().getPattern();
    long limit = limits.getOrDefault(pattern, DEFAULT_LIMIT);
    long declared = request.getContentLengthLong();
    if (declared > limit) {
      ErrorBodies.drainBody(request, response);
      ErrorBodies.send(response, ErrorCode.PAYLOAD_TOO_LARGE, tooLarge(declared, limit, request));
      return;
    }
    if (declared >= 0 || countsItself.getOrDefault(pattern, false)) {
      chain.doFilter(request, response);
      return;
    }
    try {
      chain.doFilter(limited(request, limit), response);
    } catch (BodyTooLarge e) {
      response.setHeader("Connection", "close");
      ErrorBodies.send(response, ErrorCode.PAYLOAD_TOO_LARGE, e.getMessage());
    }
  }

  private static String tooLarge(long size, long limit, HttpServletRequest request) {
    return "the request body of "
        + size
        + " bytes is over the limit of "
        + limit
        + " bytes for "
        + request.getMethod()
        + " "
        + request.getRequestURI();
  }

  /** Thrown by the body of a request that passes its limit. */
  static final class BodyTooLarge extends IOException {
    private static final long serialVersionUID = 1L;

    BodyTooLarge(String message) {
      super(message);
    }
  }

  /** A request whose body stream fails once more than the limit has been read. */
  private static HttpServletRequest limited(HttpServletRequest request, long limit) {
    long[] read = {0};
    return new CountedBody(
        request,
        n -> {
          if (n > 0) {
            read[0] += n;
            if (read[0] > limit) {
              throw new BodyTooLarge(
                  "the request body is over the limit of "
                      + limit
                      + " bytes for "
                      + request.getMethod()
                      + " "
                      + request.getRequestURI());
            }
          }
        });
  }
}

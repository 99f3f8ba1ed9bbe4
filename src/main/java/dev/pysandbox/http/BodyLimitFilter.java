package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
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
      chain.doFilter(new Limited(request, limit), response);
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
  private static final class Limited extends HttpServletRequestWrapper {
    private final long limit;
    private ServletInputStream stream;

    Limited(HttpServletRequest request, long limit) {
      super(request);
      this.limit = limit;
    }

    @Override
    public ServletInputStream getInputStream() throws IOException {
      if (stream == null) {
        stream = new Counting(super.getInputStream());
      }
      return stream;
    }

    @Override
    public BufferedReader getReader() throws IOException {
      String encoding = getCharacterEncoding();
      Charset charset = encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
      return new BufferedReader(new InputStreamReader(getInputStream(), charset));
    }

    private final class Counting extends ServletInputStream {
      private final ServletInputStream in;
      private long read;

      Counting(ServletInputStream in) {
        this.in = in;
      }

      private int count(int n) throws BodyTooLarge {
        if (n > 0) {
          read += n;
          if (read > limit) {
            throw new BodyTooLarge(
                "the request body is over the limit of "
                    + limit
                    + " bytes for "
                    + getMethod()
                    + " "
                    + getRequestURI());
          }
        }
        return n;
      }

      @Override
      public int read() throws IOException {
        int b = in.read();
        if (b >= 0) {
          count(1);
        }
        return b;
      }

      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        return count(in.read(b, off, len));
      }

      @Override
      public boolean isFinished() {
        return in.isFinished();
      }

      @Override
      public boolean isReady() {
        return in.isReady();
      }

      @Override
      public void setReadListener(ReadListener listener) {
        in.setReadListener(listener);
      }
    }
  }
}

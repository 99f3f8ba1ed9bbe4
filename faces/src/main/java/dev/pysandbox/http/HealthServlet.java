package dev.pysandbox.http;

import dev.pysandbox.util.TimeSource;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /health} (the process answers: always {@code {"status":"ok"}}) and {@code GET /ready}
 * (it can run code: 200 {@code {"ready":true}} or 503 {@code {"ready":false}}, no details, since
 * neither needs a key). Readiness is asked of the core at most about once a second, however often a
 * load balancer polls.
 */
final class HealthServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;
  private static final Logger log = LoggerFactory.getLogger(HealthServlet.class);
  static final long READY_CACHE_NANOS = 1_000_000_000L;

  private final transient BooleanSupplier ready;
  private final transient TimeSource time;
  private boolean cached;
  private long cachedAt;
  private boolean haveCached;

  HealthServlet(BooleanSupplier ready, TimeSource time) {
    this.ready = ready;
    this.time = time;
  }

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    response.setHeader("Cache-Control", "no-store");
    if (request.getServletPath().equals("/health")) {
      write(response, 200, "{\"status\":\"ok\"}");
      return;
    }
    boolean isReady = ready();
    write(response, isReady ? 200 : 503, "{\"ready\":" + isReady + "}");
  }

  private synchronized boolean ready() {
    long now = time.nanoTime();
    if (!haveCached || now - cachedAt >= READY_CACHE_NANOS) {
      boolean answer;
      try {
        answer = ready.getAsBoolean();
      } catch (RuntimeException e) {
        log.warn("the readiness check failed: {}", e.toString());
        answer = false;
      }
      cached = answer;
      cachedAt = now;
      haveCached = true;
    }
    return cached;
  }

  private static void write(HttpServletResponse response, int status, String json)
      throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.setContentType(ErrorBodies.JSON_UTF8);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }
}

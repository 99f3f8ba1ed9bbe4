package dev.pysandbox.http;

import dev.pysandbox.util.TimeSource;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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

  private final transient PeriodicRead<Boolean> ready;

  HealthServlet(BooleanSupplier ready, TimeSource time) {
    this.ready =
        new PeriodicRead<>(
            Duration.ofNanos(READY_CACHE_NANOS),
            time,
            ready::getAsBoolean,
            (e, last) -> {
              log.warn("the readiness check failed: {}", e.toString());
              return false;
            });
  }

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    response.setHeader("Cache-Control", "no-store");
    if (request.getServletPath().equals("/health")) {
      write(response, 200, "{\"status\":\"ok\"}");
      return;
    }
    boolean isReady = ready.get();
    write(response, isReady ? 200 : 503, "{\"ready\":" + isReady + "}");
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

package dev.pysandbox.http;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** {@code GET /metrics}: {@link HttpMetrics} in the Prometheus text format (a key is needed). */
final class MetricsServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final transient HttpMetrics metrics;

  MetricsServlet(HttpMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    byte[] body = metrics.scrape().getBytes(StandardCharsets.UTF_8);
    response.setContentType(CONTENT_TYPE);
    response.setHeader("Cache-Control", "no-store");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }
}

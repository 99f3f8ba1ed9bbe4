package dev.pysandbox.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The REST API and the plain routes ({@code /health}, {@code /metrics}) for the benchmark, on the
 * same lean {@code java.net.http} client as {@link RawMcpClient}; every answer is checked.
 */
final class RawRestClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final URI base;
  private final URI runs;

  RawRestClient(HttpClient http, URI base) {
    this.http = http;
    this.base = base;
    this.runs = base.resolve("/api/v1/runs");
  }

  /** {@code POST /api/v1/runs}; the run must succeed. {@code sessionId} may be null (one-shot). */
  JsonNode run(String code, String sessionId) throws IOException, InterruptedException {
    String body =
        "{\"code\":"
            + JSON.writeValueAsString(code)
            + (sessionId == null
                ? "}"
                : ",\"session_id\":" + JSON.writeValueAsString(sessionId) + "}");
    JsonNode run = send(post(runs, body), 201);
    if (!"succeeded".equals(run.path("status").asText())) {
      throw new IllegalStateException("run " + run.path("run_id") + ": " + run);
    }
    return run;
  }

  /** {@code POST /api/v1/sessions}: 200 with the session (opened, or already open). */
  void createSession(String sessionId) throws IOException, InterruptedException {
    send(
        post(
            base.resolve("/api/v1/sessions"),
            "{\"session_id\":" + JSON.writeValueAsString(sessionId) + "}"),
        200);
  }

  void closeSession(String sessionId) throws IOException, InterruptedException {
    send(HttpRequest.newBuilder(base.resolve("/api/v1/sessions/" + sessionId)).DELETE(), 200);
  }

  /** {@code GET /health}: the HTTP floor (filters, a servlet, a 15-byte answer). */
  void health() throws IOException, InterruptedException {
    send(HttpRequest.newBuilder(base.resolve("/health")).GET(), 200);
  }

  /** {@code GET /metrics} (the server runs with {@code http_auth=none}): the Prometheus text. */
  String metrics() throws IOException, InterruptedException {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(base.resolve("/metrics")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("GET /metrics: HTTP " + r.statusCode());
    }
    return r.body();
  }

  /**
   * The server's own count and seconds of the requests to this route with this method, every
   * status, from {@code /metrics} ({@code http_server_requests_seconds}).
   */
  double[] serverTotals(String method, String route) throws IOException, InterruptedException {
    String labels = "{method=\"" + method + "\",route=\"" + route + "\",";
    double[] totals = new double[2];
    for (String line : metrics().split("\n")) {
      if (line.startsWith("http_server_requests_seconds_count" + labels)) {
        totals[0] += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      } else if (line.startsWith("http_server_requests_seconds_sum" + labels)) {
        totals[1] += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return totals;
  }

  private static HttpRequest.Builder post(URI uri, String body) {
    return HttpRequest.newBuilder(uri)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
  }

  private JsonNode send(HttpRequest.Builder request, int status)
      throws IOException, InterruptedException {
    HttpResponse<String> r =
        http.send(
            request.timeout(Duration.ofSeconds(120)).build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != status) {
      throw new IllegalStateException(
          r.request().method()
              + " "
              + r.uri().getPath()
              + ": HTTP "
              + r.statusCode()
              + " "
              + r.body());
    }
    return JSON.readTree(r.body());
  }
}

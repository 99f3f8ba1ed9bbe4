package dev.pysandbox.bench;

import static dev.pysandbox.bench.LiveBench.CLOCK;
import static dev.pysandbox.bench.LiveBench.GAP_NANOS;
import static dev.pysandbox.bench.LiveBench.LINES;
import static dev.pysandbox.bench.LiveBench.WARMUP_LINES;
import static dev.pysandbox.bench.LiveBench.WARMUP_RUNS;
import static dev.pysandbox.bench.LiveBench.add;
import static dev.pysandbox.bench.LiveBench.cost;
import static dev.pysandbox.bench.LiveBench.printer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.bench.LiveBench.Arrivals;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@link LiveBench}'s figures over a real {@code serve --http --port 0} process ({@code
 * http_auth=none}, no rate limit): REST's NDJSON and SSE read line by line with {@code
 * java.net.http} on one keep-alive connection, and MCP progress from the MCP SDK's Streamable HTTP
 * client.
 */
final class LiveHttpBench {
  private static final int PROGRESS_SECONDS = 8;
  private static final String NDJSON = "application/x-ndjson";
  private static final String SSE = "text/event-stream";
  private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");
  private static final ObjectMapper JSON = new ObjectMapper();

  private LiveHttpBench() {}

  static void run(Path launcher, Path dir, int calls) throws Exception {
    Process server = startServer(launcher, dir);
    try {
      String url = HttpBench.awaitUrl(server);
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      URI runs = URI.create(url + "/api/v1/runs");
      HttpResponse<String> created =
          http.send(
              post(URI.create(url + "/api/v1/sessions"), Map.of("session_id", "live"), "*/*"),
              HttpResponse.BodyHandlers.ofString());
      if (created.statusCode() / 100 != 2) {
        throw new IllegalStateException("create session: " + created.body());
      }
      LiveBench.checkClock(
          "serve --http",
          () ->
              blocking(http, runs, Map.of("code", CLOCK, "session_id", "live"))
                  .path("stdout")
                  .asText());
      Map<String, Object> warmup = Map.of("code", printer(WARMUP_LINES), "session_id", "live");
      Map<String, Object> lines = Map.of("code", printer(LINES), "session_id", "live");
      for (String accept : List.of(NDJSON, SSE)) {
        String how = accept.equals(NDJSON) ? "NDJSON line" : "SSE data line";
        streamed(http, runs, warmup, accept, new Arrivals());
        Arrivals arrivals = new Arrivals();
        streamed(http, runs, lines, accept, arrivals);
        Benchmark.row(
            "print -> " + how + " at a java.net.http client (" + LINES + " lines)",
            arrivals.expect(LINES).ms);
      }

      Map<String, Object> print1 = Map.of("code", "print(1)", "session_id", "live");
      List<Double> plain = new ArrayList<>();
      List<Double> streamed = new ArrayList<>();
      List<Double> whole = new ArrayList<>();
      for (int i = 0; i < WARMUP_RUNS + calls; i++) {
        boolean keep = i >= WARMUP_RUNS;
        for (int turn = 0; turn < 3; turn++) {
          long t0 = System.nanoTime();
          switch ((i + turn) % 3) {
            case 0 -> {
              blocking(http, runs, print1);
              add(keep, plain, System.nanoTime() - t0);
            }
            case 1 -> add(keep, streamed, streamed(http, runs, print1, NDJSON, null) - t0);
            default -> {
              wholeStream(http, runs, print1);
              add(keep, whole, System.nanoTime() - t0);
            }
          }
        }
      }
      Benchmark.row("REST POST /runs print(1) in a session, blocking (" + calls + " runs)", plain);
      Benchmark.row("  same, Accept: " + NDJSON + ", to its done line", streamed);
      cost(streamed, plain);
      Benchmark.row("  same, NDJSON read whole (no line streaming in the client)", whole);
      cost(whole, plain);

      progress(url);
    } finally {
      server.destroy();
      server.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** The blocking answer ({@code 201}) as JSON. */
  private static JsonNode blocking(HttpClient http, URI runs, Map<String, Object> body) {
    try {
      HttpResponse<String> r =
          http.send(post(runs, body, "application/json"), HttpResponse.BodyHandlers.ofString());
      JsonNode run = JSON.readTree(r.body());
      if (r.statusCode() != 201 || !"succeeded".equals(run.path("status").asText())) {
        throw new IllegalStateException("POST /runs: " + r.statusCode() + " " + r.body());
      }
      return run;
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * A streamed run read line by line, NDJSON or SSE; its stdout to {@code arrivals} (if any).
   *
   * @return when the {@code done} event arrived ({@link System#nanoTime()})
   */
  private static long streamed(
      HttpClient http, URI runs, Map<String, Object> body, String accept, Arrivals arrivals)
      throws Exception {
    HttpResponse<Stream<String>> r =
        http.send(post(runs, body, accept), HttpResponse.BodyHandlers.ofLines());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("POST /runs (" + accept + "): " + r.statusCode());
    }
    long done = 0;
    try (Stream<String> lines = r.body()) {
      for (Iterator<String> it = lines.iterator(); it.hasNext(); ) {
        String line = it.next();
        long at = System.nanoTime();
        if (accept.equals(SSE)) {
          if (!line.startsWith("data:")) {
            continue;
          }
          line = line.substring(5);
        }
        JsonNode event = JSON.readTree(line);
        String type = event.path("type").asText();
        if (type.equals("stdout") && arrivals != null) {
          arrivals.take(event.path("text").asText(), at);
        } else if (type.equals("done")) {
          if (!"succeeded".equals(event.path("status").asText())) {
            throw new IllegalStateException("streamed run: " + line);
          }
          done = at;
        }
      }
    }
    if (done == 0) {
      throw new IllegalStateException("the " + accept + " stream ended without done");
    }
    return done;
  }

  /** A streamed run's NDJSON read as one body, which leaves out the client's line splitting. */
  private static void wholeStream(HttpClient http, URI runs, Map<String, Object> body)
      throws Exception {
    HttpResponse<String> r =
        http.send(post(runs, body, NDJSON), HttpResponse.BodyHandlers.ofString());
    String done = r.body().substring(r.body().lastIndexOf("{\"type\":"));
    if (r.statusCode() != 200 || !JSON.readTree(done).path("status").asText().equals("succeeded")) {
      throw new IllegalStateException(
          "POST /runs (" + NDJSON + "): " + r.statusCode() + " " + done);
    }
  }

  private static HttpRequest post(URI uri, Map<String, Object> body, String accept)
      throws IOException {
    return HttpRequest.newBuilder(uri)
        .header("Content-Type", "application/json")
        .header("Accept", accept)
        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
        .build();
  }

  /** MCP progress notifications over the server's Streamable HTTP endpoint. */
  private static void progress(String url) {
    record Tick(long atNanos, String message) {}
    List<Tick> ticks = new CopyOnWriteArrayList<>();
    HttpClientStreamableHttpTransport transport =
        HttpClientStreamableHttpTransport.builder(url).endpoint("/mcp").build();
    try (McpSyncClient mcp =
        McpClient.sync(transport)
            .requestTimeout(Duration.ofSeconds(120))
            .progressConsumer(p -> ticks.add(new Tick(System.nanoTime(), p.message())))
            .build()) {
      mcp.initialize();
      Benchmark.call(mcp, "create_session", Map.of("session_id", "live-mcp"));
      int lines = (int) (PROGRESS_SECONDS * 1_000_000_000L / GAP_NANOS);
      CallToolResult r =
          mcp.callTool(
              CallToolRequest.builder("run_python")
                  .arguments(Map.of("code", printer(lines), "session_id", "live-mcp"))
                  .progressToken("live-bench")
                  .build());
      if (Boolean.TRUE.equals(r.isError())) {
        throw new IllegalStateException("run_python: " + r.content());
      }
    }
    List<Double> gaps = new ArrayList<>();
    List<Double> ages = new ArrayList<>();
    for (int i = 0; i < ticks.size(); i++) {
      Tick t = ticks.get(i);
      if (i > 0) {
        gaps.add((t.atNanos() - ticks.get(i - 1).atNanos()) / 1e6);
      }
      if (t.message() != null && t.message().startsWith("L ")) {
        ages.add((t.atNanos() - LiveBench.printedAt(t.message())) / 1e6);
      }
    }
    if (gaps.isEmpty() || ages.isEmpty()) {
      throw new IllegalStateException("MCP progress: " + ticks.size() + " notifications");
    }
    Collections.sort(gaps);
    Collections.sort(ages);
    System.out.printf(
        Locale.ROOT,
        "MCP progress over HTTP, a %d s run printing every %d ms: %d notifications, interval p50"
            + " %.1f ms (min %.1f, max %.1f); age of its line at the client p50 %.2f ms, max"
            + " %.2f ms%n",
        PROGRESS_SECONDS,
        GAP_NANOS / 1_000_000,
        ticks.size(),
        Benchmark.pct(gaps, 50),
        gaps.get(0),
        gaps.get(gaps.size() - 1),
        Benchmark.pct(ages, 50),
        ages.get(ages.size() - 1));
  }

  private static Process startServer(Path launcher, Path dir) throws IOException {
    return new ProcessBuilder(
            launcher.toString(),
            "serve",
            "--http",
            "--port",
            "0",
            "--data-dir",
            dir.toString(),
            "--set",
            "http_auth=none",
            "--set",
            "rate_limit_per_second=0")
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start();
  }
}

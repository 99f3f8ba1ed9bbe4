package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.util.Sha256;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The REST API of {@code bin/pysandbox serve --http} as its users meet it: 50 MB uploads on every
 * face (three at once through REST on a server given a 64 MiB heap, and upload_file over MCP on
 * HTTP and on stdio), a run whose client goes away, and {@code /metrics} after real work.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
@Client
class HttpRestIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int FIFTY_MB = 52_428_800; // upload_max_bytes' default
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir Path dataDir;
  @TempDir Path workDir;

  private static byte[] random(int size, long seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
    return CLIENT.send(
        b.timeout(Duration.ofSeconds(300)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> postJson(URI uri, Object body) throws Exception {
    return send(
        HttpRequest.newBuilder(uri)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))));
  }

  /** The heap in use, as the server's own /metrics says (every heap pool). */
  private static long heapUsed(URI base) {
    try {
      String text = send(HttpRequest.newBuilder(base.resolve("/metrics")).GET()).body();
      return text.lines()
          .filter(l -> l.startsWith("jvm_memory_used_bytes{area=\"heap\""))
          .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
          .sum();
    } catch (Exception e) {
      return -1;
    }
  }

  /**
   * Regression: REST uploads stopped at 1,148,576 bytes. Three 50 MB uploads at once, raw, chunked
   * and as a form, into a server whose heap is 64 MiB: a server that held a file would fail.
   */
  @Test
  void fiftyMegabyteUploads_threeAtOnce_onA64MiBHeap_rawChunkedAndForm() throws Exception {
    byte[] data = random(FIFTY_MB, 50);
    String sha = Sha256.hex(data);
    try (HttpServerProcess server =
        HttpServerProcess.start(
            dataDir,
            workDir,
            Map.of("PYSANDBOX_JAVA_OPTS", "-Xmx64m"),
            "--set",
            "http_auth=none",
            "--set",
            "pool_size=1")) {
      URI api = server.uri().resolve("/api/v1/");
      for (String s : List.of("raw", "chunked", "form")) {
        // One upload at a time per session: three sessions.
        assertThat(postJson(api.resolve("sessions"), Map.of("session_id", s)).statusCode())
            .isEqualTo(200);
      }
      long idle = heapUsed(server.uri());
      AtomicLong peak = new AtomicLong();
      AtomicBoolean uploading = new AtomicBoolean(true);
      Thread sampler =
          new Thread(
              () -> {
                while (uploading.get()) {
                  peak.accumulateAndGet(heapUsed(server.uri()), Math::max);
                }
              });
      sampler.start();
      long began = System.nanoTime();
      List<CompletableFuture<HttpResponse<String>>> uploads = new ArrayList<>();
      uploads.add(
          CLIENT.sendAsync(
              HttpRequest.newBuilder(api.resolve("sessions/raw/files/raw.bin"))
                  .PUT(HttpRequest.BodyPublishers.ofByteArray(data))
                  .build(),
              HttpResponse.BodyHandlers.ofString()));
      uploads.add(
          CLIENT.sendAsync(
              HttpRequest.newBuilder(api.resolve("sessions/chunked/files/chunked.bin"))
                  .PUT(
                      HttpRequest.BodyPublishers.ofInputStream(
                          () -> new ByteArrayInputStream(data)))
                  .build(),
              HttpResponse.BodyHandlers.ofString()));
      uploads.add(
          CLIENT.sendAsync(
              HttpRequest.newBuilder(api.resolve("sessions/form/files"))
                  .header("Content-Type", "multipart/form-data; boundary=Bnd")
                  .POST(
                      HttpRequest.BodyPublishers.ofInputStream(
                          () ->
                              new SequenceInputStream(
                                  java.util.Collections.enumeration(
                                      List.<InputStream>of(
                                          new ByteArrayInputStream(
                                              ("--Bnd\r\nContent-Disposition: form-data;"
                                                      + " name=\"file\"; filename=\"form.bin\"\r\n\r\n")
                                                  .getBytes(StandardCharsets.US_ASCII)),
                                          new ByteArrayInputStream(data),
                                          new ByteArrayInputStream(
                                              "\r\n--Bnd--\r\n"
                                                  .getBytes(StandardCharsets.US_ASCII)))))))
                  .build(),
              HttpResponse.BodyHandlers.ofString()));
      List<Long> took = new ArrayList<>();
      for (CompletableFuture<HttpResponse<String>> u : uploads) {
        HttpResponse<String> r = u.get(300, TimeUnit.SECONDS);
        took.add((System.nanoTime() - began) / 1_000_000);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        JsonNode up = JSON.readTree(r.body());
        assertThat(up.path("size_bytes").asLong()).isEqualTo(FIFTY_MB);
        assertThat(up.path("sha256").asText()).isEqualTo(sha);
      }
      uploading.set(false);
      sampler.join();
      System.out.printf(
          "three 50 MB uploads at once (raw, chunked, form) on -Xmx64m: done after %s ms;"
              + " heap in use %.1f MiB idle, %.1f MiB at most while uploading%n",
          took, idle / 1048576.0, peak.get() / 1048576.0);

      HttpResponse<String> over =
          send(
              HttpRequest.newBuilder(api.resolve("sessions/raw/files/over.bin"))
                  .PUT(
                      HttpRequest.BodyPublishers.ofInputStream(
                          () ->
                              new SequenceInputStream(
                                  new ByteArrayInputStream(data),
                                  new ByteArrayInputStream(new byte[1])))));
      assertThat(over.statusCode()).as(over.body()).isEqualTo(413);
      assertThat(JSON.readTree(over.body()).path("error").path("code").asText())
          .isEqualTo("payload_too_large");
      assertThat(server.process.isAlive()).isTrue();
    }
  }

  /** upload_file of 50 MB over MCP on HTTP and on stdio (a JSON-RPC message of about 67 MB). */
  @Test
  void fiftyMegabyteUploadFile_overMcp_onHttpAndOnStdio() throws Exception {
    byte[] data = random(FIFTY_MB, 51);
    String sha = Sha256.hex(data);
    String base64 = Base64.getEncoder().encodeToString(data);
    try (HttpServerProcess server =
        HttpServerProcess.start(dataDir, workDir, "--set", "http_auth=none")) {
      URI mcp = server.uri().resolve("/mcp");
      HttpResponse<String> init =
          mcpPost(
              mcp,
              null,
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                  + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                  + "\"clientInfo\":{\"name\":\"it\",\"version\":\"1\"}}}");
      assertThat(init.statusCode()).as(init.body()).isEqualTo(200);
      String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
      assertThat(
              mcpPost(
                      mcp,
                      session,
                      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
                  .statusCode())
          .isEqualTo(202);
      HttpResponse<String> up =
          mcpPost(
              mcp,
              session,
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                  + "\"upload_file\",\"arguments\":{\"session_id\":\"big\",\"filename\":"
                  + "\"data/fifty.bin\",\"content_base64\":\""
                  + base64
                  + "\"}}}");
      assertThat(up.statusCode()).isEqualTo(200);
      JsonNode result = message(up.body()).path("result");
      assertThat(result.path("isError").asBoolean()).as(abbreviate(up.body())).isFalse();
      assertThat(result.path("structuredContent").path("size_bytes").asLong()).isEqualTo(FIFTY_MB);
      assertThat(result.path("structuredContent").path("sha256").asText()).isEqualTo(sha);
    }
    try (RawMcpClient stdio = new RawMcpClient(dataDir)) {
      stdio.initialize();
      JsonNode up =
          stdio.call(
              "upload_file",
              Map.of("session_id", "big-stdio", "filename", "fifty.bin", "content_base64", base64),
              300);
      JsonNode result = up.path("result").path("structuredContent");
      assertThat(result.path("size_bytes").asLong())
          .as(abbreviate(up.toString()))
          .isEqualTo(FIFTY_MB);
      assertThat(result.path("sha256").asText()).isEqualTo(sha);
    }
  }

  private static HttpResponse<String> mcpPost(URI mcp, String session, String body)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(mcp)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      b.header("Mcp-Session-Id", session).header("Mcp-Protocol-Version", "2025-06-18");
    }
    return send(b);
  }

  /** The JSON-RPC message of an answer, sent as JSON or as one server-sent event. */
  private static JsonNode message(String body) throws Exception {
    String b = body.strip();
    if (b.startsWith("{")) {
      return JSON.readTree(b);
    }
    return JSON.readTree(
        b.lines()
            .filter(l -> l.startsWith("data:"))
            .map(l -> l.substring(5).strip())
            .reduce((x, y) -> y)
            .orElse(""));
  }

  private static String abbreviate(String s) {
    return s.length() < 2000 ? s : s.substring(0, 2000) + "...";
  }

  /**
   * Regression: a blocking POST /runs whose client gave up ran on to its end for nobody. The client
   * is java.net.http, whose cancelled call closes its connection.
   */
  @Test
  void aRunWhoseClientGivesUp_isCancelled_andItsRecordSaysWhy() throws Exception {
    try (HttpServerProcess server =
        HttpServerProcess.start(dataDir, workDir, "--set", "http_auth=none")) {
      URI api = server.uri().resolve("/api/v1/");
      CompletableFuture<HttpResponse<String>> call =
          CLIENT.sendAsync(
              HttpRequest.newBuilder(api.resolve("runs"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          JSON.writeValueAsString(
                              Map.of(
                                  "session_id",
                                  "given-up",
                                  "code",
                                  "import time\nprint('on', flush=True)\ntime.sleep(120)",
                                  "timeout_seconds",
                                  300))))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      JsonNode running =
          Await.until(
              "the run is running",
              Duration.ofSeconds(60),
              () -> runsOf(api, "given-up"),
              runs -> runs.size() == 1 && runs.get(0).path("status").asText().equals("running"));
      String runId = running.get(0).path("run_id").asText();
      assertThat(call.cancel(true)).isTrue();
      JsonNode run =
          Await.until(
              "run " + runId + " ended",
              Duration.ofSeconds(60),
              () -> {
                try {
                  return JSON.readTree(
                      send(HttpRequest.newBuilder(api.resolve("runs/" + runId)).GET()).body());
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              },
              r -> !r.path("status").asText().equals("running"));
      assertThat(run.path("status").asText()).as(run.toString()).isEqualTo("cancelled");
      assertThat(run.path("message").asText()).contains("the client disconnected");
      // The record is written before the log line is read off the server's stderr.
      Await.until(
          "the server logs that the run's client disconnected",
          () -> server.stderr,
          lines -> lines.stream().anyMatch(l -> l.contains("its client disconnected")));
    }
  }

  private static JsonNode runsOf(URI api, String session) {
    try {
      return JSON.readTree(
              send(HttpRequest.newBuilder(api.resolve("runs?session_id=" + session)).GET()).body())
          .path("runs");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Regression: pysandbox_sessions_open was NaN with sessions open. Scraped from the real server
   * after real runs: the counts are what was done.
   */
  @Test
  void metrics_afterRealWork_sayWhatWasDone() throws Exception {
    try (HttpServerProcess server =
        HttpServerProcess.start(dataDir, workDir, "--set", "http_auth=none")) {
      URI api = server.uri().resolve("/api/v1/");
      for (String s : List.of("m1", "m2", "m3")) {
        assertThat(postJson(api.resolve("sessions"), Map.of("session_id", s)).statusCode())
            .isEqualTo(200);
      }
      for (String code : List.of("1", "2", "raise SystemExit(3)")) {
        assertThat(postJson(api.resolve("runs"), Map.of("code", code)).statusCode()).isEqualTo(201);
      }
      String text = send(HttpRequest.newBuilder(server.uri().resolve("/metrics")).GET()).body();
      assertThat(sample(text, "pysandbox_sessions_open")).isEqualTo(3.0);
      assertThat(sum(text, "pysandbox_runs_total{status=\"succeeded\"")).isEqualTo(2.0);
      assertThat(sum(text, "pysandbox_runs_total{status=\"failed\"")).isEqualTo(1.0);
      assertThat(
              sample(
                  text,
                  "http_server_requests_seconds_count{method=\"POST\",route=\"/api/v1/runs\","
                      + "status=\"201\"}"))
          .isEqualTo(3.0);
      assertThat(text.lines().filter(l -> l.startsWith("pysandbox_")))
          .noneMatch(l -> l.endsWith("NaN"));
    }
  }

  /** The sum of the series whose line starts with {@code prefix} (over their other labels). */
  private static double sum(String text, String prefix) {
    return text.lines()
        .filter(l -> l.startsWith(prefix))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  private static double sample(String text, String series) {
    return text.lines()
        .filter(l -> l.startsWith(series + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
        .findFirst()
        .orElseThrow(() -> new AssertionError(series + " not in:\n" + text));
  }
}

package dev.pysandbox.http;

import static dev.pysandbox.http.RestFace.tree;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client of {@code POST /api/v1/runs} that closes its connection while its run runs, through the
 * whole HTTP face: the run is cancelled, as {@code cancel_run} would, and its record says why;
 * unless it asked for {@code async_mode}, which runs on without its caller. A client that stays
 * gets its answer, and its connection serves its next request.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class HttpClientGoneTest {
  private static final String SLOW = "import time\nprint('on', flush=True)\ntime.sleep(60)";

  @TempDir static Path dataDir;
  static RestFace http;

  @BeforeAll
  static void start() {
    http = RestFace.start(dataDir, Map.of("max_sessions", "10", "cancel_grace", "2"));
  }

  @AfterAll
  static void stop() {
    if (http != null) {
      http.close();
    }
  }

  private static Socket post(String path, Map<String, Object> body, String accept)
      throws IOException {
    byte[] json = RestFace.JSON.writeValueAsBytes(body);
    Socket s = new Socket("127.0.0.1", http.port());
    s.setSoTimeout(60_000);
    OutputStream out = s.getOutputStream();
    out.write(
        ("POST "
                + path
                + " HTTP/1.1\r\nHost: 127.0.0.1:"
                + http.port()
                + "\r\nContent-Type: application/json\r\n"
                + (accept == null ? "" : "Accept: " + accept + "\r\n")
                + "Content-Length: "
                + json.length
                + "\r\n\r\n")
            .getBytes(StandardCharsets.ISO_8859_1));
    out.write(json);
    out.flush();
    return s;
  }

  /** The only run of a session, once it is running. */
  private static String runningRunOf(String session) throws Exception {
    JsonNode run =
        Await.until(
            "a run of " + session + " is running",
            () -> {
              try {
                JsonNode runs = tree(http.get("/api/v1/runs?session_id=" + session)).path("runs");
                return runs.size() == 1 ? runs.get(0) : null;
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            r -> r != null && r.path("status").asText().equals("running"));
    return run.path("run_id").asText();
  }

  private static JsonNode ended(String runId) throws Exception {
    return Await.until(
        "run " + runId + " has ended",
        Duration.ofSeconds(60),
        () -> {
          try {
            return tree(http.get("/api/v1/runs/" + runId + "?include_code=false"));
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        },
        r -> !r.path("status").asText().equals("running"));
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new IOException("the connection closed: " + b);
      }
      b.write(c);
    }
    return b.toString(StandardCharsets.UTF_8).strip();
  }

  /** Reads the answer's head and returns the first line of its (chunked) body. */
  private static String firstBodyLine(InputStream in) throws IOException {
    while (!line(in).isEmpty()) {
      // headers
    }
    line(in); // the chunk's size
    return line(in);
  }

  private static void assertCancelledForTheClient(JsonNode run) {
    assertThat(run.path("status").asText()).as(run.toString()).isEqualTo("cancelled");
    assertThat(run.path("message").asText()).contains("the client disconnected");
  }

  /** Regression: the run went on to its end, and was recorded as succeeded, for nobody. */
  @Test
  void aBlockingRun_whoseClientCloses_isCancelled_andItsRecordSaysWhy() throws Exception {
    String runId;
    Socket s = post("/api/v1/runs", Map.of("code", SLOW, "session_id", "gone-1"), null);
    runId = runningRunOf("gone-1");
    s.close();
    assertCancelledForTheClient(ended(runId));
    JsonNode session = tree(http.get("/api/v1/sessions/gone-1"));
    assertThat(session.path("state").asText()).as("KeyboardInterrupt kept it").isEqualTo("idle");
  }

  @Test
  void aStreamedRun_whoseClientCloses_isCancelled_asNdjsonAndAsSse() throws Exception {
    for (String accept : new String[] {"application/x-ndjson", "text/event-stream"}) {
      String session = "gone-" + accept.length();
      String runId;
      try (Socket s = post("/api/v1/runs", Map.of("code", SLOW, "session_id", session), accept)) {
        String first = firstBodyLine(s.getInputStream());
        assertThat(first).as(accept).isNotEmpty();
        runId = runningRunOf(session);
      }
      assertCancelledForTheClient(ended(runId));
    }
  }

  @Test
  void aRerun_whoseClientCloses_isCancelled() throws Exception {
    String original =
        tree(http.post("/api/v1/runs", Map.of("code", "1", "session_id", "gone-3")))
            .path("run_id")
            .asText();
    String runId;
    Socket s =
        post(
            "/api/v1/runs/" + original + "/rerun",
            Map.of("code", SLOW, "session_id", "gone-3"),
            null);
    {
      runId =
          Await.until(
                  "the rerun is running",
                  () -> {
                    try {
                      return tree(http.get("/api/v1/runs?session_id=gone-3")).path("runs");
                    } catch (Exception e) {
                      throw new IllegalStateException(e);
                    }
                  },
                  runs -> runs.size() == 2 && runs.get(0).path("status").asText().equals("running"))
              .get(0)
              .path("run_id")
              .asText();
    }
    s.close();
    assertCancelledForTheClient(ended(runId));
  }

  @Test
  void anAsyncStreamedRun_whoseClientCloses_runsOnToItsEnd() throws Exception {
    String runId;
    try (Socket s =
        post(
            "/api/v1/runs",
            Map.of(
                "code",
                "import time\nprint('on', flush=True)\ntime.sleep(2)\nprint('done')",
                "session_id",
                "gone-4",
                "async_mode",
                true),
            "application/x-ndjson")) {
      firstBodyLine(s.getInputStream());
      runId = runningRunOf("gone-4");
    }
    JsonNode run = ended(runId);
    assertThat(run.path("status").asText()).as(run.toString()).isEqualTo("succeeded");
  }

  @Test
  void aClientThatStays_getsItsRun_andItsConnectionServesTheNextRequest() throws Exception {
    byte[] json = RestFace.JSON.writeValueAsBytes(Map.of("code", "import time\ntime.sleep(1)\n7"));
    String request =
        "POST /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1:"
            + http.port()
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + json.length
            + "\r\n\r\n";
    try (Socket s = new Socket("127.0.0.1", http.port())) {
      s.setSoTimeout(60_000);
      InputStream in = s.getInputStream();
      for (int i = 0; i < 3; i++) {
        s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().write(json);
        String status = line(in);
        assertThat(status).as("answer %d on one connection", i).startsWith("HTTP/1.1 201");
        int length = 0;
        for (String h = line(in); !h.isEmpty(); h = line(in)) {
          if (h.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
            length = Integer.parseInt(h.substring(15).trim());
          }
          assertThat(h.toLowerCase(java.util.Locale.ROOT)).isNotEqualTo("connection: close");
        }
        JsonNode run = RestFace.JSON.readTree(in.readNBytes(length));
        assertThat(run.path("status").asText()).isEqualTo("succeeded");
        assertThat(run.path("result").path("text/plain").asText()).isEqualTo("7");
      }
    }
  }
}

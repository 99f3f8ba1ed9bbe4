package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.NodeScript;
import dev.pysandbox.TestServices;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a server's end is recorded: whatever stops it (its stdio client going away, a signal), the
 * runs in flight on every face are ended and recorded, with why, by the server itself before its
 * process exits; none is left {@code running} for the next server on the data directory to find.
 * The records are read afterwards with {@code runs show}, which only looks (it marks nothing).
 */
@Client
class ServeStopIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dataDir;

  /**
   * Issue 23, item 4: with {@code --http --stdio}, the end of stdin waited {@code shutdown_grace}
   * for HTTP requests in flight, and the SDK's close (SIGTERM 2 s after the end of stdin, SIGKILL 2
   * s later) killed it first, leaving both runs {@code running}.
   */
  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void endOfStdinFromTheTsSdk_withHttpAndStdioRunsInFlight_recordsThemInterruptedBeforeExit()
      throws Exception {
    NodeScript.Result r =
        NodeScript.run(
            "stdin-close.mjs",
            Duration.ofSeconds(120),
            List.of(
                "--deadline-s=90",
                "--",
                TestServices.launcher().toString(),
                "serve",
                "--http",
                "--stdio",
                "--port",
                "0",
                "--set",
                "http_auth=none",
                "--data-dir",
                dataDir.toString()));
    String why = r.describe();
    assertThat(r.exit()).as(why).isZero();
    JsonNode report = r.report();
    assertThat(report.path("process").path("signal").isNull())
        .as("the server exited by itself, never killed by the SDK's SIGKILL: " + why)
        .isTrue();
    // 0: it ended within the SDK's 2 s grace; 143: the SDK's SIGTERM came first (a loaded
    // machine) and the server ended through its shutdown hook. Either way what stopped the runs
    // was the end of stdin (their messages below): how fast is the benchmark's business.
    assertThat(report.path("process").path("code").asInt(-1)).as(why).isIn(0, 143);
    assertThat(report.path("http_answer").path("run_status").asText())
        .as("the HTTP request was answered: " + why)
        .isEqualTo("interrupted");
    for (String face : List.of("http_run_id", "stdio_run_id")) {
      JsonNode run = recorded(report.path(face).asText());
      assertThat(run.path("status").asText()).as(face + ": " + run).isEqualTo("interrupted");
      assertThat(run.path("message").asText()).as(face).contains("end of stdin");
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void sigtermOnServeHttp_withARunInFlight_recordsItCancelledWithTheReasonBeforeExit()
      throws Exception {
    HttpServerProcess server =
        HttpServerProcess.start(
            dataDir, dataDir, "--set", "http_auth=none", "--set", "shutdown_grace=1");
    try {
      HttpClient http = HttpClient.newHttpClient();
      URI api = server.uri().resolve("/api/v1/");
      CompletableFuture<HttpResponse<String>> answer =
          http.sendAsync(
              HttpRequest.newBuilder(api.resolve("runs"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"code\": \"import time\\ntime.sleep(600)\"}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      JsonNode running =
          Await.until(
              "a run is running",
              Duration.ofSeconds(60),
              () -> runningRuns(http, api),
              runs -> runs.size() == 1);
      String runId = running.get(0).path("run_id").asText();
      server.process.destroy();
      assertThat(server.process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(server.process.exitValue()).as(String.join("\n", server.stderr)).isZero();
      assertThat(answer.get(10, TimeUnit.SECONDS).body()).contains("\"cancelled\"");
      JsonNode run = recorded(runId);
      assertThat(run.path("status").asText()).as(run.toString()).isEqualTo("cancelled");
      assertThat(run.path("message").asText()).contains("told to stop").contains("shutdown_grace");
    } finally {
      server.close();
    }
  }

  private static JsonNode runningRuns(HttpClient http, URI api) {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(api.resolve("runs?status=running")).build(),
              HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(r.body()).path("runs");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The run as the record keeps it, read with the CLI (which changes nothing). */
  private JsonNode recorded(String runId) throws Exception {
    ServerProcess.Result shown = ServerProcess.run(dataDir, null, "runs", "show", runId, "--json");
    assertThat(shown.exit()).as(shown.stderr()).isZero();
    return JSON.readTree(shown.stdout());
  }
}

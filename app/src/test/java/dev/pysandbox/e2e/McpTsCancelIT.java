package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Client;
import dev.pysandbox.NodeScript;
import dev.pysandbox.TestServices;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real client abort from the official MCP TypeScript SDK (what happens when a Claude Code user
 * presses Esc): the SDK sends notifications/cancelled for a 60-second run_python. Guards that the
 * server stops the run: the session takes a new run within 5 s, the run is recorded as cancelled,
 * and the aborted request gets no answer. Over stdio and over Streamable HTTP (where the cancel was
 * once answered 202 and ignored: the run went on to its end and its answer was sent).
 */
@Client
class McpTsCancelIT {
  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void abortFromTheTsSdk_cancelsTheRun_freesTheSession_andIsNotAnswered(@TempDir Path dataDir)
      throws Exception {
    NodeScript.Result r =
        NodeScript.run(
            "cancel.mjs",
            Duration.ofSeconds(90),
            List.of(
                "--deadline-s=60",
                "--",
                TestServices.launcher().toString(),
                "serve",
                "--data-dir",
                dataDir.toString(),
                "--set",
                "max_sessions=80"));
    String why = r.describe();
    assertThat(r.exit()).as(why).isZero();
    JsonNode report = r.report();
    assertThat(report.path("cancel_sent").asBoolean()).as(why).isTrue();
    assertThat(report.path("late_answers").size()).as(why).isZero();
    assertThat(report.path("first_run").path("status").asText()).as(why).isEqualTo("cancelled");
    assertThat(report.path("after").path("run_id").asText()).as(why).isNotEmpty();
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void abortFromTheTsSdk_overStreamableHttp_cancelsTheRun_andIsNotAnswered(
      @TempDir Path dataDir, @TempDir Path workDir) throws Exception {
    try (HttpServerProcess server =
        HttpServerProcess.start(
            dataDir, workDir, "--set", "http_auth=none", "--set", "max_sessions=80")) {
      NodeScript.Result r =
          NodeScript.run(
              "cancel.mjs",
              Duration.ofSeconds(90),
              List.of("--deadline-s=60", "--", server.uri() + "/mcp"));
      String why = r.describe() + "\n--- server ---\n" + String.join("\n", server.stderr);
      assertThat(r.exit()).as(why).isZero();
      JsonNode report = r.report();
      assertThat(report.path("transport").asText()).isEqualTo("http");
      assertThat(report.path("cancel_sent").asBoolean()).as(why).isTrue();
      assertThat(report.path("late_answers").size()).as(why).isZero();
      assertThat(report.path("first_run").path("status").asText()).as(why).isEqualTo("cancelled");
      assertThat(report.path("after").path("run_id").asText()).as(why).isNotEmpty();
      assertThat(String.join("\n", server.stderr))
          .as("the SDK's complaint when it had no handler for the cancel")
          .doesNotContain("No handler registered for notification method");
    }
  }
}

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
 * An agent run with the client's own model from the official MCP TypeScript SDK (sampling.mjs),
 * over stdio and over Streamable HTTP: the server asks the client's model twice, the second time
 * with the code's real output, and the agent run succeeds with the client's answer.
 */
@Client
class AgentSamplingTsIT {
  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void overStdio(@TempDir Path dataDir) throws Exception {
    NodeScript.Result r =
        NodeScript.run(
            "sampling.mjs",
            Duration.ofSeconds(90),
            List.of(
                "--deadline-s=60",
                "--",
                TestServices.launcher().toString(),
                "serve",
                "--data-dir",
                dataDir.toString()));
    check(r, "stdio", r.describe());
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void overStreamableHttp(@TempDir Path dataDir, @TempDir Path workDir) throws Exception {
    try (HttpServerProcess server =
        HttpServerProcess.start(dataDir, workDir, "--set", "http_auth=none")) {
      NodeScript.Result r =
          NodeScript.run(
              "sampling.mjs",
              Duration.ofSeconds(90),
              List.of("--deadline-s=60", "--", server.uri() + "/mcp"));
      check(r, "http", r.describe() + "\n--- server ---\n" + String.join("\n", server.stderr));
    }
  }

  private static void check(NodeScript.Result r, String transport, String why) throws Exception {
    assertThat(r.exit()).as(why).isZero();
    JsonNode report = r.report();
    assertThat(report.path("transport").asText()).isEqualTo(transport);
    assertThat(report.path("status").asText()).as(why).isEqualTo("succeeded");
    assertThat(report.path("model").asText()).isEqualTo("ts-model");
    assertThat(report.path("steps").asInt()).isEqualTo(3);
    assertThat(report.path("sampled").get(1).path("last").asText()).contains("ts says 42");
  }
}

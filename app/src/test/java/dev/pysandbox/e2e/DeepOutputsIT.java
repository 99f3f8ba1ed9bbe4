package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 item 8 on the real server: {@code __outputs__} nested 985 deep overflowed the server's
 * stack; REST answered 500, MCP never answered, and the run stayed {@code running}. Now both faces
 * answer a failed run that names the limit, and the record says so.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Client
class DeepOutputsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String DEEP =
      "d = 0\nfor _ in range(985):\n    d = [d]\n__outputs__['deep'] = d\nprint('made')\n";

  @TempDir Path dataDir;
  @TempDir Path workDir;

  @Test
  void overMcpStdio_aClearFailedRun() {
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args("serve", "--data-dir", dataDir.toString(), "--set", "pool_size=0")
            .build();
    McpSyncClient client =
        McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
            .requestTimeout(Duration.ofSeconds(60))
            .build();
    try {
      client.initialize();
      McpSchema.CallToolResult r =
          client.callTool(
              McpSchema.CallToolRequest.builder("run_python")
                  .arguments(Map.of("code", DEEP))
                  .build());
      @SuppressWarnings("unchecked")
      Map<String, Object> run = (Map<String, Object>) r.structuredContent();
      assertThat(run).containsEntry("status", "failed");
      assertThat((String) run.get("message")).contains("deeper than 64 levels");
      McpSchema.CallToolResult got =
          client.callTool(
              McpSchema.CallToolRequest.builder("get_run")
                  .arguments(Map.of("run_id", run.get("run_id")))
                  .build());
      @SuppressWarnings("unchecked")
      Map<String, Object> stored = (Map<String, Object>) got.structuredContent();
      assertThat(stored).containsEntry("status", "failed");
    } finally {
      client.closeGracefully();
    }
  }

  @Test
  void overRest_aClearFailedRun_not500() throws Exception {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try (HttpServerProcess server =
        HttpServerProcess.start(
            dataDir, workDir, "--set", "http_auth=none", "--set", "pool_size=0")) {
      URI api = server.uri().resolve("/api/v1/");
      HttpResponse<String> posted =
          http.send(
              HttpRequest.newBuilder(api.resolve("runs"))
                  .timeout(Duration.ofSeconds(60))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          JSON.writeValueAsString(Map.of("code", DEEP))))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(posted.statusCode()).as(posted.body()).isEqualTo(201);
      JsonNode run = JSON.readTree(posted.body());
      assertThat(run.path("status").asText()).isEqualTo("failed");
      assertThat(run.path("message").asText()).contains("deeper than 64 levels");
      HttpResponse<String> got =
          http.send(
              HttpRequest.newBuilder(api.resolve("runs/" + run.path("run_id").asText())).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(JSON.readTree(got.body()).path("status").asText()).isEqualTo("failed");
    }
  }
}

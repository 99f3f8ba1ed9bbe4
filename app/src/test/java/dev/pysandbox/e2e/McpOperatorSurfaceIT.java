package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Client;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an operator sets about the MCP surface, over both transports with real clients (issue 23,
 * item 16): {@code tools_enabled} offers a smaller tool set over stdio and HTTP (REST keeps every
 * operation), and {@code logging/setLevel} takes only the specification's levels (it took any).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Client
class McpOperatorSurfaceIT {
  static final List<String> ENABLED =
      List.of(
          "run_python",
          "validate_code",
          "cancel_run",
          "rerun",
          "upload_file",
          "download_file",
          "list_artifacts",
          "read_artifact",
          "check_setup");

  Path dataDir;
  HttpServerProcess server;
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    dataDir = dir;
    Path workDir = java.nio.file.Files.createDirectories(dir.resolve("work"));
    server =
        HttpServerProcess.start(
            dir.resolve("http"),
            workDir,
            "--set",
            "http_auth=none",
            "--set",
            "rate_limit_per_second=0",
            "--set",
            "tools_enabled=run,files,info");
  }

  @AfterAll
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void toolsEnabled_offersOnlyThoseTools_overStdioAndHttp_andRestKeepsEveryOperation()
      throws Exception {
    int everyToolBytes;
    try (RawMcpClient all = new RawMcpClient(dataDir.resolve("all"))) {
      all.initialize();
      everyToolBytes = all.request("tools/list", null, 60).toString().length();
    }
    try (RawMcpClient c =
        new RawMcpClient(dataDir.resolve("few"), "tools_enabled=run,files,info")) {
      c.initialize();
      JsonNode list = c.request("tools/list", null, 60);
      List<String> names = new ArrayList<>();
      list.path("result").path("tools").forEach(t -> names.add(t.path("name").asText()));
      int fewToolBytes = list.toString().length();
      System.out.printf(
          "tools/list over stdio: %d bytes with every tool, %d with tools_enabled=run,files,info%n",
          everyToolBytes, fewToolBytes);

      assertThat(names).containsExactlyInAnyOrderElementsOf(ENABLED);
      assertThat(fewToolBytes).isLessThan(everyToolBytes / 2);
      JsonNode refused = c.request("tools/call", Map.of("name", "list_runs"), 60);
      assertThat(refused.path("error").path("code").asInt()).isEqualTo(-32602);
      assertThat(refused.path("error").path("message").asText())
          .contains("unknown tool 'list_runs': not enabled on this server", "tools_enabled");
    }

    try (McpSyncClient c = httpClient()) {
      assertThat(c.listTools().tools())
          .extracting(McpSchema.Tool::name)
          .containsExactlyInAnyOrderElementsOf(ENABLED);
    }
    HttpResponse<String> rest =
        http.send(
            HttpRequest.newBuilder(server.uri().resolve("/api/v1/runs")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(rest.statusCode()).as(rest.body()).isEqualTo(200);
  }

  @Test
  void loggingSetLevel_takesOnlyTheSpecificationsLevels_overStdioAndHttp() throws Exception {
    List<Object> wrong = new ArrayList<>(List.of("bogus", "WARN", 5));
    try (RawMcpClient c = new RawMcpClient(dataDir.resolve("stdio"))) {
      c.initialize();
      for (String level :
          List.of(
              "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")) {
        assertThat(c.request("logging/setLevel", Map.of("level", level), 30).has("result"))
            .as(level)
            .isTrue();
      }
      for (Object level : wrong) {
        JsonNode a = c.request("logging/setLevel", Map.of("level", level), 30);
        assertThat(a.path("error").path("code").asInt()).as("%s", level).isEqualTo(-32602);
        assertThat(a.path("error").path("message").asText())
            .contains("debug, info, notice, warning, error, critical, alert, emergency");
      }
      assertThat(c.request("logging/setLevel", Map.of(), 30).path("error").path("code").asInt())
          .isEqualTo(-32602);
    }

    try (McpSyncClient c = httpClient()) {
      c.setLoggingLevel(McpSchema.LoggingLevel.NOTICE); // a valid level still works
    }
    String session = httpSession();
    for (Object level : wrong) {
      String body =
          "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"logging/setLevel\",\"params\":{\"level\":"
              + RawMcpClient.JSON.writeValueAsString(level)
              + "}}";
      HttpResponse<String> r = post(body, session);
      JsonNode a = RawMcpClient.JSON.readTree(r.body());
      assertThat(a.path("id").asInt()).isEqualTo(7);
      assertThat(a.path("error").path("code").asInt())
          .as("%s: %s", level, r.body())
          .isEqualTo(-32602);
      assertThat(a.path("error").path("message").asText()).contains("notice");
    }
  }

  private McpSyncClient httpClient() {
    HttpClientStreamableHttpTransport transport =
        HttpClientStreamableHttpTransport.builder(server.uri().toString()).endpoint("/mcp").build();
    McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build();
    client.initialize();
    return client;
  }

  /** A new MCP session over raw HTTP, initialized; its id. */
  private String httpSession() throws Exception {
    HttpResponse<String> init =
        post(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"it\",\"version\":"
                + "\"1\"}}}",
            null);
    assertThat(init.statusCode()).as(init.body()).isEqualTo(200);
    String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
    assertThat(
            post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", session)
                .statusCode())
        .isEqualTo(202);
    return session;
  }

  private HttpResponse<String> post(String body, String session) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(server.uri().resolve("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      b.header("Mcp-Session-Id", session).header("Mcp-Protocol-Version", "2025-06-18");
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}

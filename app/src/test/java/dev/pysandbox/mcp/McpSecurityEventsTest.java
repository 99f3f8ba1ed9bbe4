package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code list_security_events} as an MCP client calls it, over the real stdio transport against the
 * real core: the JSON page and its text lines, and what the parser refuses.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class McpSecurityEventsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dataDir;
  DefaultSandboxService service;
  OutputStream toServer;
  BufferedReader fromServer;
  StdioConnection connection;
  int nextId = 1;

  @BeforeEach
  void start() throws IOException {
    service = TestServices.start(dataDir, Map.of("pool_size", "1"));
    PipedOutputStream clientOut = new PipedOutputStream();
    PipedInputStream serverIn = new PipedInputStream(clientOut, 1 << 20);
    PipedInputStream clientIn = new PipedInputStream(1 << 20);
    PipedOutputStream serverOut = new PipedOutputStream(clientIn);
    connection = new McpFace(service, 4096).serveStdio(serverIn, serverOut, 1 << 20);
    toServer = clientOut;
    fromServer = new BufferedReader(new InputStreamReader(clientIn, StandardCharsets.UTF_8));
    request(
        "initialize",
        "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}");
    send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  }

  @AfterEach
  void stop() throws IOException {
    toServer.close();
    connection.close(1000);
    service.close();
  }

  @Test
  void listSecurityEvents_givesTheRunStoppedByItsTimeout_asJsonAndAsTextLines() throws Exception {
    JsonNode none = call("list_security_events", "{}");
    assertThat(none.path("structuredContent").path("events")).isEmpty();
    assertThat(none.path("content").get(0).path("text").asText()).isEqualTo("0 security events\n");

    JsonNode ran =
        call("run_python", "{\"code\":\"while True: pass\",\"timeout_seconds\":1}")
            .path("structuredContent");
    assertThat(ran.path("status").asText()).isEqualTo("timed_out");
    String runId = ran.path("run_id").asText();

    JsonNode listed =
        call("list_security_events", "{\"kind\":\"limit_stopped_run\",\"since\":\"1h\"}");
    assertThat(listed.path("isError").asBoolean()).as(listed.toString()).isFalse();
    JsonNode event = listed.path("structuredContent").path("events").get(0);
    assertThat(event.path("run_id").asText()).isEqualTo(runId);
    assertThat(event.path("detail").path("limit").asText()).isEqualTo("timeout");
    assertThat(event.has("tenant")).isFalse();
    assertThat(listed.path("structuredContent").path("next_cursor").isNull()).isTrue();
    String text = listed.path("content").get(0).path("text").asText();
    assertThat(text.lines().toList()).hasSize(2).first().isEqualTo("1 security events");
    assertThat(text.lines().toList().get(1))
        .startsWith(event.path("at").asText() + "  limit_stopped_run  -  " + runId + "  {")
        .contains("\"limit\":\"timeout\"");
  }

  @Test
  void listSecurityEvents_withAnUnknownKindOrABadSince_isInvalidArgument() throws Exception {
    JsonNode kind = call("list_security_events", "{\"kind\":\"oom\"}");
    assertThat(kind.path("isError").asBoolean()).isTrue();
    assertThat(kind.path("structuredContent").path("error").path("code").asText())
        .isEqualTo("invalid_argument");
    assertThat(kind.path("structuredContent").path("error").path("message").asText())
        .contains("unknown kind 'oom'")
        .contains("sandbox_died");
    JsonNode since = call("list_security_events", "{\"since\":\"yesterday\"}");
    assertThat(since.path("structuredContent").path("error").path("message").asText())
        .contains("since 'yesterday' is neither an age");
  }

  private JsonNode call(String tool, String arguments) throws IOException {
    return request("tools/call", "{\"name\":\"" + tool + "\",\"arguments\":" + arguments + "}")
        .path("result");
  }

  private JsonNode request(String method, String params) throws IOException {
    int id = nextId++;
    send(
        "{\"jsonrpc\":\"2.0\",\"id\":"
            + id
            + ",\"method\":\""
            + method
            + "\",\"params\":"
            + params
            + "}");
    while (true) {
      String line = fromServer.readLine();
      assertThat(line).as("answer to " + method).isNotNull();
      JsonNode msg = JSON.readTree(line);
      if (msg.path("id").asInt(-1) == id) {
        return msg;
      }
    }
  }

  private void send(String line) throws IOException {
    toServer.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    toServer.flush();
  }
}

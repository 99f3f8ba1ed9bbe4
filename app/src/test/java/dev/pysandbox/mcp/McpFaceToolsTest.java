package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Fast;
import dev.pysandbox.api.op.InputSchema;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.Operations;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The tools a client sees are the declared operations: the MCP face over its real stdio transport,
 * in this process, with no core behind it (nothing here reaches the service).
 */
@Timeout(30)
@Fast
class McpFaceToolsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private OutputStream toServer;
  private BufferedReader fromServer;
  private StdioConnection connection;
  private int nextId = 1;

  @BeforeEach
  void start() throws IOException {
    PipedOutputStream clientOut = new PipedOutputStream();
    PipedInputStream serverIn = new PipedInputStream(clientOut, 1 << 20);
    PipedInputStream clientIn = new PipedInputStream(1 << 20);
    PipedOutputStream serverOut = new PipedOutputStream(clientIn);
    connection = new McpFace(null, 1000).serveStdio(serverIn, serverOut, 1 << 20);
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
  }

  /**
   * The server skips the SDK's check of its own tools' schemas at start (LazySchemaValidator): this
   * is that check, with the SDK's real validator, on every schema a client sees.
   */
  @Test
  @SuppressWarnings("unchecked")
  void everyToolSchema_passesTheSdksOwnSchemaCheck() throws IOException {
    var validator = io.modelcontextprotocol.json.McpJsonDefaults.getSchemaValidator();
    JsonNode tools = request("tools/list", "{}").path("result").path("tools");
    assertThat(tools.size()).isEqualTo(Operations.ALL.size());
    for (JsonNode t : tools) {
      for (String which : List.of("inputSchema", "outputSchema")) {
        java.util.Map<String, Object> schema =
            JSON.convertValue(t.path(which), java.util.Map.class);
        var answer = validator.validateSchema(schema);
        assertThat(answer.valid())
            .as(t.path("name").asText() + " " + which + ": " + answer)
            .isTrue();
      }
    }
    var broken = validator.validateSchema(java.util.Map.of("type", "no-such-type"));
    assertThat(broken.valid()).as("the check can fail").isFalse();
  }

  @Test
  void toolsList_showsEveryDeclaredOperation_withTheSchemaAndHintsDerivedFromIt()
      throws IOException {
    JsonNode tools = request("tools/list", "{}").path("result").path("tools");
    List<String> names = new ArrayList<>();
    tools.forEach(t -> names.add(t.path("name").asText()));
    assertThat(names)
        .containsExactlyElementsOf(Operations.ALL.stream().map(Operation::name).toList());
    for (JsonNode t : tools) {
      Operation op = Operations.named(t.path("name").asText());
      assertThat(t.path("inputSchema"))
          .as(op.name())
          .isEqualTo(JSON.readTree(JSON.writeValueAsString(InputSchema.of(op))));
      assertThat(t.path("description").asText()).isEqualTo(op.description());
      assertThat(t.path("title").asText()).isEqualTo(op.title());
      JsonNode hints = t.path("annotations");
      assertThat(hints.path("readOnlyHint").asBoolean()).isEqualTo(op.effect().readOnly());
      assertThat(hints.path("destructiveHint").asBoolean()).isEqualTo(op.effect().destructive());
      assertThat(hints.path("idempotentHint").asBoolean()).isEqualTo(op.effect().idempotent());
      assertThat(t.path("outputSchema").path("type").asText()).isEqualTo("object");
    }
  }

  @Test
  void toolsCall_withAnUndeclaredArgument_isRefusedByTheParserBeforeTheCore() throws IOException {
    JsonNode result =
        request(
                "tools/call",
                "{\"name\":\"get_run\",\"arguments\":{\"run_id\":\"r\",\"bogus\":true}}")
            .path("result");
    assertThat(result.path("isError").asBoolean()).isTrue();
    assertThat(result.path("structuredContent").path("error").path("code").asText())
        .isEqualTo("invalid_argument");
    assertThat(result.path("structuredContent").path("error").path("message").asText())
        .isEqualTo(
            "get_run: unknown argument 'bogus' (accepted: include_code, include_notebook_source,"
                + " run_id, wait_seconds)");
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

package dev.pysandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.mcp.McpFace;
import dev.pysandbox.mcp.StdioConnection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * An MCP client speaking JSON-RPC lines to the real MCP face over its real stdio transport, in this
 * process, so that a test can drive a core whose time it moves ({@link ManualTime}). Each instance
 * is one initialized connection.
 */
public final class InProcessMcp implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final OutputStream toServer;
  private final BufferedReader fromServer;
  private final StdioConnection connection;
  private int nextId = 1;

  public InProcessMcp(SandboxService service) throws IOException {
    PipedOutputStream clientOut = new PipedOutputStream();
    PipedInputStream serverIn = new PipedInputStream(clientOut, 1 << 20);
    PipedInputStream clientIn = new PipedInputStream(1 << 20);
    PipedOutputStream serverOut = new PipedOutputStream(clientIn);
    connection = new McpFace(service, 65536).serveStdio(serverIn, serverOut, 1 << 22);
    toServer = clientOut;
    fromServer = new BufferedReader(new InputStreamReader(clientIn, StandardCharsets.UTF_8));
    request(
        "initialize",
        Map.of(
            "protocolVersion",
            "2025-06-18",
            "capabilities",
            Map.of(),
            "clientInfo",
            Map.of("name", "test", "version", "1")));
    send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  }

  /** A tools/call's result ({@code content}, {@code structuredContent}, {@code isError}). */
  public JsonNode call(String tool, Map<String, ?> arguments) throws IOException {
    return request("tools/call", Map.of("name", tool, "arguments", arguments)).path("result");
  }

  /** A call that must succeed: its structured content. */
  public JsonNode ok(String tool, Map<String, ?> arguments) throws IOException {
    JsonNode r = call(tool, arguments);
    assertThat(r.path("isError").asBoolean()).as("%s %s: %s", tool, arguments, r).isFalse();
    return r.path("structuredContent");
  }

  /** A call that must fail: its {@code error} object ({@code code}, {@code message}, ...). */
  public JsonNode error(String tool, Map<String, ?> arguments) throws IOException {
    JsonNode r = call(tool, arguments);
    assertThat(r.path("isError").asBoolean()).as("%s %s: %s", tool, arguments, r).isTrue();
    return r.path("structuredContent").path("error");
  }

  private JsonNode request(String method, Object params) throws IOException {
    int id = nextId++;
    ObjectNode msg = JSON.createObjectNode().put("jsonrpc", "2.0").put("id", id);
    msg.put("method", method).set("params", JSON.valueToTree(params));
    send(JSON.writeValueAsString(msg));
    while (true) {
      String line = fromServer.readLine();
      assertThat(line).as("answer to " + method).isNotNull();
      JsonNode answer = JSON.readTree(line);
      if (answer.path("id").asInt(-1) == id) {
        return answer;
      }
    }
  }

  private void send(String line) throws IOException {
    toServer.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    toServer.flush();
  }

  @Override
  public void close() throws IOException {
    toServer.close();
    connection.close(1000);
  }
}

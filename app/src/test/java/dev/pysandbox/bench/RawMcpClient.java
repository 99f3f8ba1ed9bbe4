package dev.pysandbox.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A lean MCP client over Streamable HTTP for the benchmark, so that the server's cost shows apart
 * from the MCP SDK client's: {@code java.net.http} on HTTP/1.1 keep-alive, JSON-RPC written by
 * hand, the answer read whether it comes as JSON or as an SSE stream. Every answer is checked (an
 * error, or a tool result with {@code isError}, throws). One MCP session per instance; calls from
 * one thread at a time.
 */
final class RawMcpClient {
  static final String PROTOCOL_VERSION = "2025-11-25";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final URI mcp;
  private long nextId = 1;
  private String sessionId;

  RawMcpClient(HttpClient http, URI base) {
    this.http = http;
    this.mcp = base.resolve("/mcp");
  }

  /** An HTTP/1.1 client (a pool of keep-alive connections, one per call in flight). */
  static HttpClient newHttpClient() {
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10))
        .build();
  }

  /** {@code initialize}, then {@code notifications/initialized}: the session stays open. */
  RawMcpClient open() throws IOException, InterruptedException {
    HttpResponse<String> r =
        post(
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\""
                + PROTOCOL_VERSION
                + "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}");
    answer(r, 0);
    sessionId =
        r.headers()
            .firstValue("Mcp-Session-Id")
            .orElseThrow(() -> new IllegalStateException("initialize: no Mcp-Session-Id"));
    HttpResponse<String> ack =
        post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    if (ack.statusCode() != 202) {
      throw new IllegalStateException("notifications/initialized: HTTP " + ack.statusCode());
    }
    return this;
  }

  /**
   * One request; {@code params} is a JSON object or null.
   *
   * @return its {@code result}
   */
  JsonNode request(String method, String params) throws IOException, InterruptedException {
    long id = nextId++;
    String body =
        "{\"jsonrpc\":\"2.0\",\"id\":"
            + id
            + ",\"method\":\""
            + method
            + (params == null ? "\"}" : "\",\"params\":" + params + "}");
    return answer(post(body), id);
  }

  /** {@code tools/call}; {@code arguments} is a JSON object. A tool error throws. */
  JsonNode callTool(String name, String arguments) throws IOException, InterruptedException {
    JsonNode result =
        request("tools/call", "{\"name\":\"" + name + "\",\"arguments\":" + arguments + "}");
    if (result.path("isError").asBoolean(false)) {
      throw new IllegalStateException(name + " failed: " + result.path("content"));
    }
    return result;
  }

  private HttpResponse<String> post(String body) throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(mcp)
            .timeout(Duration.ofSeconds(120))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (sessionId != null) {
      b.header("Mcp-Session-Id", sessionId).header("MCP-Protocol-Version", PROTOCOL_VERSION);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The result of the answer with this id, from a JSON body or from the events of an SSE one. */
  private static JsonNode answer(HttpResponse<String> r, long id) throws IOException {
    if (r.statusCode() != 200) {
      throw new IllegalStateException("HTTP " + r.statusCode() + ": " + r.body());
    }
    String type = r.headers().firstValue("Content-Type").orElse("");
    if (!type.startsWith("text/event-stream")) {
      return result(JSON.readTree(r.body()), id);
    }
    StringBuilder data = new StringBuilder();
    for (String line : (r.body() + "\n\n").split("\r?\n", -1)) {
      if (line.startsWith("data:")) {
        data.append(line, line.startsWith("data: ") ? 6 : 5, line.length()).append('\n');
      } else if (line.isEmpty() && data.length() > 0) {
        JsonNode message = JSON.readTree(data.toString());
        data.setLength(0);
        if (message.path("id").asLong(-1) == id) {
          return result(message, id);
        }
      }
    }
    throw new IllegalStateException("no answer to " + id + " in the stream: " + r.body());
  }

  private static JsonNode result(JsonNode message, long id) {
    if (message.has("error") || message.path("id").asLong(-1) != id) {
      throw new IllegalStateException("answer to " + id + ": " + message);
    }
    return message.path("result");
  }
}

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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run_python(async_mode=true)} and {@code get_run(wait_seconds)} as an MCP client calls
 * them, over the real stdio transport against the real core: the answer comes at once, the session
 * is busy while the run goes on, {@code get_run} waits for the end, {@code cancel_run} stops it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class McpAsyncRunTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dataDir;
  static DefaultSandboxService service;
  static OutputStream toServer;
  static BufferedReader fromServer;
  static StdioConnection connection;
  static int nextId = 1;

  @BeforeAll
  static void start() throws IOException {
    service = TestServices.start(dataDir, Map.of());
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

  @AfterAll
  static void stop() throws IOException {
    toServer.close();
    connection.close(1000);
    service.close();
  }

  static JsonNode call(String tool, String arguments) throws IOException {
    return request("tools/call", "{\"name\":\"" + tool + "\",\"arguments\":" + arguments + "}")
        .path("result");
  }

  @Test
  void asyncRun_answersAtOnce_holdsItsSession_andGetRunWaitsForItsEnd() throws Exception {
    JsonNode started =
        call(
            "run_python",
            "{\"code\":\"import time\\ntime.sleep(2)\\nprint('done')\","
                + "\"session_id\":\"mcp-async\",\"async_mode\":true}");
    JsonNode run = started.path("structuredContent");
    assertThat(started.path("isError").asBoolean()).as(started.toString()).isFalse();
    // Answered before the code ended: the run it names is still running.
    assertThat(run.path("status").asText()).isEqualTo("running");
    assertThat(run.path("session_id").asText()).isEqualTo("mcp-async");
    String runId = run.path("run_id").asText();

    JsonNode busy = call("run_python", "{\"code\":\"1\",\"session_id\":\"mcp-async\"}");
    assertThat(busy.path("isError").asBoolean()).isTrue();
    assertThat(busy.path("structuredContent").path("error").path("code").asText())
        .isEqualTo("session_busy");

    JsonNode waited = call("get_run", "{\"run_id\":\"" + runId + "\",\"wait_seconds\":20}");
    assertThat(waited.path("structuredContent").path("status").asText()).isEqualTo("succeeded");
    assertThat(waited.path("structuredContent").path("stdout").asText()).isEqualTo("done\n");

    JsonNode tooLong = call("get_run", "{\"run_id\":\"" + runId + "\",\"wait_seconds\":61}");
    assertThat(tooLong.path("structuredContent").path("error").path("code").asText())
        .isEqualTo("invalid_argument");
  }

  @Test
  void cancelRun_stopsAnAsyncRun() throws Exception {
    JsonNode started =
        call("run_python", "{\"code\":\"import time\\ntime.sleep(60)\",\"async_mode\":true}");
    String runId = started.path("structuredContent").path("run_id").asText();
    JsonNode cancelled = call("cancel_run", "{\"run_id\":\"" + runId + "\"}");
    assertThat(cancelled.path("structuredContent").path("status").asText())
        .as(cancelled.toString())
        .isEqualTo("cancelled");
    JsonNode run = call("get_run", "{\"run_id\":\"" + runId + "\",\"wait_seconds\":5}");
    assertThat(run.path("structuredContent").path("status").asText()).isEqualTo("cancelled");
  }

  private static synchronized JsonNode request(String method, String params) throws IOException {
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

  private static void send(String line) throws IOException {
    toServer.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    toServer.flush();
  }
}

package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Json;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the trajectory keeps of real tool calls (the MCP face over its stdio transport in this
 * process, the real core behind it): one line per call, in order, naming the session and run; and
 * nothing of what the calls carried — file contents, code, context values.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Sandboxed
class McpTrajectoryTest {
  @TempDir Path dataDir;
  private DefaultSandboxService service;
  private OutputStream toServer;
  private BufferedReader fromServer;
  private StdioConnection connection;
  private int nextId = 1;

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
        Map.of(
            "protocolVersion",
            "2025-06-18",
            "capabilities",
            Map.of(),
            "clientInfo",
            Map.of("name", "test", "version", "1")));
    send(Map.of("jsonrpc", "2.0", "method", "notifications/initialized"));
  }

  @AfterEach
  void stop() throws IOException {
    toServer.close();
    connection.close(1000);
    service.close();
  }

  @Test
  void toolCalls_areRecordedInOrder_withSizesOnly_neverWhatTheyCarried() throws Exception {
    String fileSecret = "FILE-SECRET-" + System.nanoTime();
    String codeSecret = "CODE-SECRET-" + System.nanoTime();
    String valueSecret = "VALUE-SECRET-" + System.nanoTime();
    String oneShotSecret = "ONESHOT-SECRET-" + System.nanoTime();
    call("create_session", Map.of("session_id", "traj"));
    call("upload_file", Map.of("session_id", "traj", "filename", "a.txt", "content", fileSecret));
    call(
        "upload_file",
        Map.of(
            "session_id",
            "traj",
            "filename",
            "b.bin",
            "content_base64",
            Base64.getEncoder().encodeToString(fileSecret.getBytes(StandardCharsets.UTF_8))));
    JsonNode run =
        call(
            "run_python",
            Map.of(
                "session_id",
                "traj",
                "code",
                "s = '" + codeSecret + "'\nprint(open('a.txt').read())"));
    String runId = run.path("run_id").asText();
    assertThat(run.path("stdout").asText()).contains(fileSecret);
    call("set_context", Map.of("session_id", "traj", "values", Map.of("k", valueSecret)));
    call("get_context", Map.of("session_id", "traj", "names", List.of("k", "s")));
    call("get_run", Map.of("run_id", runId));
    call("read_artifact", Map.of("session_id", "traj", "path", "a.txt"));
    JsonNode missing = callRaw("get_run", Map.of("run_id", "run_00000000000000000000"));
    assertThat(missing.path("isError").asBoolean()).isTrue();
    call("run_python", Map.of("code", "'" + oneShotSecret + "'"));

    Path session = dataDir.resolve("trajectories/local/sessions/traj.jsonl");
    List<JsonNode> lines = lines(session, 8);
    assertThat(lines)
        .extracting(n -> n.path("tool").asText())
        .containsExactly(
            "create_session",
            "upload_file",
            "upload_file",
            "run_python",
            "set_context",
            "get_context",
            "get_run",
            "read_artifact");
    assertThat(lines).allSatisfy(n -> assertThat(n.path("face").asText()).isEqualTo("mcp_stdio"));
    assertThat(lines).allSatisfy(n -> assertThat(n.path("status").asText()).isEqualTo("ok"));
    assertThat(lines.get(3).path("run_id").asText()).isEqualTo(runId);
    assertThat(lines.get(3).path("run_status").asText()).isEqualTo("succeeded");
    assertThat(lines.get(6).path("run_id").asText()).isEqualTo(runId);
    assertThat(lines.get(6).path("session_id").asText()).as("the run's session").isEqualTo("traj");
    assertThat(lines.get(1).path("arguments").path("content").path("bytes").asLong())
        .isEqualTo(fileSecret.length());

    Path days = dataDir.resolve("trajectories/local/days");
    List<JsonNode> day =
        Await.until("two lines in a day's file", () -> dayLines(days), l -> l.size() >= 2);
    assertThat(day)
        .extracting(n -> n.path("tool").asText())
        .containsExactly("get_run", "run_python");
    assertThat(day.get(0).path("error_code").asText()).isEqualTo("not_found");
    assertThat(day.get(1).path("session_id").isNull()).isTrue();

    service.close(); // everything queued is written
    try (Stream<Path> all = Files.walk(dataDir.resolve("trajectories"))) {
      for (Path f : all.filter(Files::isRegularFile).toList()) {
        String text = Files.readString(f);
        assertThat(text)
            .as(f.toString())
            .doesNotContain(fileSecret)
            .doesNotContain(
                Base64.getEncoder().encodeToString(fileSecret.getBytes(StandardCharsets.UTF_8)))
            .doesNotContain(codeSecret)
            .doesNotContain(valueSecret)
            .doesNotContain(oneShotSecret)
            .doesNotContain("SECRET");
      }
    }
  }

  private static List<JsonNode> lines(Path file, int atLeast) throws InterruptedException {
    return Await.until(atLeast + " lines in " + file, () -> read(file), l -> l.size() >= atLeast);
  }

  private static List<JsonNode> dayLines(Path days) {
    try (Stream<Path> files = Files.list(days)) {
      List<JsonNode> all = new ArrayList<>();
      for (Path f : files.toList()) {
        all.addAll(read(f));
      }
      return all;
    } catch (IOException e) {
      return List.of();
    }
  }

  private static List<JsonNode> read(Path file) {
    try {
      List<JsonNode> out = new ArrayList<>();
      for (String l : Files.readAllLines(file)) {
        out.add(Json.mapper().readTree(l));
      }
      return out;
    } catch (IOException e) {
      return List.of();
    }
  }

  private JsonNode call(String tool, Map<String, Object> arguments) throws IOException {
    JsonNode r = callRaw(tool, arguments);
    assertThat(r.path("isError").asBoolean()).as(tool + ": " + r).isFalse();
    return r.path("structuredContent");
  }

  private JsonNode callRaw(String tool, Map<String, Object> arguments) throws IOException {
    return request("tools/call", Map.of("name", tool, "arguments", arguments)).path("result");
  }

  private JsonNode request(String method, Map<String, Object> params) throws IOException {
    int id = nextId++;
    Map<String, Object> msg = new LinkedHashMap<>();
    msg.put("jsonrpc", "2.0");
    msg.put("id", id);
    msg.put("method", method);
    msg.put("params", params);
    send(msg);
    while (true) {
      String line = fromServer.readLine();
      assertThat(line).as("answer to " + method).isNotNull();
      JsonNode answer = Json.mapper().readTree(line);
      if (answer.path("id").asInt(-1) == id) {
        return answer;
      }
    }
  }

  private void send(Map<String, Object> message) throws IOException {
    toServer.write((Json.write(message) + "\n").getBytes(StandardCharsets.UTF_8));
    toServer.flush();
  }
}

package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * In stdio mode every byte on stdout is MCP protocol, even while the server logs and migrates, and
 * wherever the client starts it from. Desktop clients start it from {@code /} or their own
 * directory: there the JVM once printed "[warning][cds,dynamic] Unable to use shared archive" to
 * stdout, before the first answer (the class-data archive named the jar by a relative path).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Client
class StdoutHygieneIT {
  private static final String REQUESTS =
      String.join(
          "\n",
          "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}",
          "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
          "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\",\"arguments\":{\"code\":\"import sys\\nprint('to stdout')\\nsys.__stdout__.write('raw')\\nprint('{\\\"jsonrpc\\\": \\\"2.0\\\", \\\"id\\\": 3}')\"}}}",
          "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"check_setup\",\"arguments\":{}}}",
          "");

  private final ObjectMapper json = new ObjectMapper();

  @TempDir Path dataDir;
  @TempDir Path otherDir;

  @Test
  void serve_startedFromTheCheckout_writesNothingButJsonRpcToStdout() throws Exception {
    assertOnlyJsonRpcOnStdout(Path.of("").toAbsolutePath());
  }

  @Test
  void serve_startedFromRoot_writesNothingButJsonRpcToStdout() throws Exception {
    assertOnlyJsonRpcOnStdout(Path.of("/"));
  }

  @Test
  void serve_startedFromAnotherDirectory_writesNothingButJsonRpcToStdout() throws Exception {
    assertOnlyJsonRpcOnStdout(otherDir);
  }

  private void assertOnlyJsonRpcOnStdout(Path workingDir) throws Exception {
    Process idle = serve(workingDir);
    idle.getOutputStream().close();
    String idleOut = new String(idle.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(idle.waitFor(20, TimeUnit.SECONDS))
        .as("the server exits when stdin closes")
        .isTrue();
    assertThat(idleOut).as("a server whose client leaves at once says nothing").isEmpty();
    assertThat(idle.exitValue()).isZero();

    // Keep stdin open until every answer is in: the SDK drops responses in flight at EOF.
    Process p = serve(workingDir);
    try {
      p.getOutputStream().write(REQUESTS.getBytes(StandardCharsets.UTF_8));
      p.getOutputStream().flush();
      var reader =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      List<String> lines = new ArrayList<>();
      Set<Integer> answered = new HashSet<>();
      String line;
      while (answered.size() < 4 && (line = reader.readLine()) != null) {
        lines.add(line);
        JsonNode msg = jsonRpc(line, workingDir);
        if (msg.has("id")) {
          answered.add(msg.get("id").asInt());
        }
      }
      p.getOutputStream().close();
      assertThat(p.waitFor(20, TimeUnit.SECONDS)).as("the server exits when stdin closes").isTrue();
      reader.lines().forEach(lines::add);
      lines.forEach(l -> jsonRpc(l, workingDir));
      assertThat(answered).as("answers on stdout: %s", lines).containsExactlyInAnyOrder(1, 2, 3, 4);
    } finally {
      p.destroyForcibly();
    }
  }

  private Process serve(Path workingDir) throws Exception {
    return new ProcessBuilder(
            TestServices.launcher().toString(),
            "serve",
            "--data-dir",
            dataDir.toString(),
            "--set",
            "log_level=debug")
        .directory(workingDir.toFile())
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
  }

  /** The line as a JSON-RPC 2.0 message, or a failure quoting it. */
  private JsonNode jsonRpc(String line, Path workingDir) {
    String context = "stdout line, server started from " + workingDir + ": " + line;
    try {
      JsonNode msg = json.readTree(line);
      assertThat(msg).as(context).isNotNull();
      assertThat(msg.isObject()).as(context).isTrue();
      assertThat(msg.path("jsonrpc").asText()).as(context).isEqualTo("2.0");
      return msg;
    } catch (JsonProcessingException e) {
      return fail("not JSON: " + context, e);
    }
  }
}

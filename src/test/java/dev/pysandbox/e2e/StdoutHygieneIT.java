package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** In stdio mode every byte on stdout is MCP protocol, even while the server logs and migrates. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class StdoutHygieneIT {
  @TempDir Path dataDir;

  @Test
  void serve_writesNothingButJsonRpcToStdout() throws Exception {
    String requests =
        String.join(
            "\n",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\",\"arguments\":{\"code\":\"import sys\\nprint('to stdout')\\nsys.__stdout__.write('raw')\\nprint('{\\\"jsonrpc\\\": \\\"2.0\\\", \\\"id\\\": 3}')\"}}}",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"check_setup\",\"arguments\":{}}}",
            "");
    ServerProcess.Result idle =
        ServerProcess.run(dataDir, null, "serve", "--set", "log_level=debug");
    assertThat(idle.stdout()).as("a server whose client leaves at once says nothing").isEmpty();
    assertThat(idle.exit()).isZero();
    // Keep stdin open until every answer is in: the SDK drops responses in flight at EOF.
    Process p =
        new ProcessBuilder(
                dev.pysandbox.TestServices.launcher().toString(),
                "serve",
                "--data-dir",
                dataDir.toString(),
                "--set",
                "log_level=debug")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    p.getOutputStream().write(requests.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    p.getOutputStream().flush();
    ObjectMapper json = new ObjectMapper();
    var reader =
        new java.io.BufferedReader(
            new java.io.InputStreamReader(
                p.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
    java.util.Set<Integer> answered = new java.util.HashSet<>();
    String line;
    while (answered.size() < 4 && (line = reader.readLine()) != null) {
      JsonNode msg = json.readTree(line);
      assertThat(msg.path("jsonrpc").asText()).as(line).isEqualTo("2.0");
      if (msg.has("id")) {
        answered.add(msg.get("id").asInt());
      }
    }
    p.getOutputStream().close();
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).as("the server exits when stdin closes").isTrue();
    String rest =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    for (String l : rest.split("\n")) {
      if (!l.isBlank()) {
        assertThat(json.readTree(l).path("jsonrpc").asText()).as(l).isEqualTo("2.0");
      }
    }
    assertThat(answered).containsExactlyInAnyOrder(1, 2, 3, 4);
  }
}

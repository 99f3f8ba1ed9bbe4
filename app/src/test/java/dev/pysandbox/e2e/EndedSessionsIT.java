package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import dev.pysandbox.backend.ProcessTable;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real server (bin/pysandbox serve) and the MCP SDK's client over stdio: a closed session, and
 * one whose server was killed with SIGKILL and started again, each answer their code with when and
 * why, across the restart; a new id is still made on first use.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class EndedSessionsIT {
  @TempDir Path dataDir;

  private McpSyncClient connect() {
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args("serve", "--data-dir", dataDir.toString())
            .build();
    McpSyncClient client =
        McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
            .requestTimeout(Duration.ofSeconds(90))
            .build();
    client.initialize();
    return client;
  }

  private static CallToolResult call(McpSyncClient c, String tool, Map<String, Object> args) {
    return c.callTool(CallToolRequest.builder(tool).arguments(args).build());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> error(CallToolResult r) {
    assertThat(r.isError()).as("%s", r).isTrue();
    return (Map<String, Object>) ((Map<String, Object>) r.structuredContent()).get("error");
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> ok(CallToolResult r) {
    assertThat(r.isError()).as("%s", r).isFalse();
    return (Map<String, Object>) r.structuredContent();
  }

  @Test
  void closedAndKilledServersSessions_answerClosedAndLost_withWhen_acrossARestart()
      throws Exception {
    McpSyncClient first = connect();
    Instant before = Instant.now();
    ok(call(first, "run_python", Map.of("session_id", "s-closed", "code", "x = 41")));
    ok(call(first, "close_session", Map.of("session_id", "s-closed")));
    Map<String, Object> closed =
        error(call(first, "run_python", Map.of("session_id", "s-closed", "code", "print(x)")));
    assertThat(closed).containsEntry("code", "session_closed").containsEntry("retryable", false);
    assertThat((String) closed.get("message"))
        .startsWith("session 's-closed' was closed at ")
        .contains(" by close_session; its variables and files are gone.");
    assertThat(whenIn((String) closed.get("message"), "was closed at ")).isAfterOrEqualTo(before);

    ok(call(first, "run_python", Map.of("session_id", "s-lost", "code", "y = 1")));
    List<Long> server =
        ProcessTable.withCommandLineContaining(dataDir.toString()).stream()
            .filter(EndedSessionsIT::isJava)
            .toList();
    assertThat(server).as("the server's JVM").hasSize(1);
    new ProcessBuilder("kill", "-KILL", Long.toString(server.get(0))).start().waitFor();
    first.close();

    McpSyncClient second = connect();
    try {
      Map<String, Object> lost =
          error(call(second, "run_python", Map.of("session_id", "s-lost", "code", "print(y)")));
      assertThat(lost).containsEntry("code", "session_lost").containsEntry("retryable", false);
      assertThat((String) lost.get("message"))
          .startsWith("session 's-lost' was lost at ")
          .contains(") stopped while it was open (last used at ")
          .contains("its variables and files are gone.");
      assertThat(whenIn((String) lost.get("message"), "was lost at ")).isAfter(before);
      Map<String, Object> stillClosed =
          error(call(second, "get_context", Map.of("session_id", "s-closed")));
      assertThat(stillClosed).containsEntry("code", "session_closed");
      assertThat(ok(call(second, "run_python", Map.of("session_id", "s-new", "code", "print(7)"))))
          .containsEntry("stdout", "7\n");
    } finally {
      second.closeGracefully();
    }
  }

  private static boolean isJava(long pid) {
    try {
      return java.nio.file.Files.readString(Path.of("/proc", Long.toString(pid), "comm"))
          .strip()
          .equals("java");
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** The instant after {@code prefix} in a message (up to the next space or colon). */
  private static Instant whenIn(String message, String prefix) {
    String rest = message.substring(message.indexOf(prefix) + prefix.length());
    return Instant.parse(rest.split("[ ;]|: ", 2)[0]);
  }
}

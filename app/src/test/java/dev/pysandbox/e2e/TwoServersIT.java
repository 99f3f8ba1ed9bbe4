package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import dev.pysandbox.backend.ProcessTable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two clients, two servers, one host: a server that starts (and stops, again and again) with
 * another data directory never touches the first one's sandboxes or cgroups, and commands that only
 * look never clean up anything.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Client
class TwoServersIT {
  /** How long a poll of `runs list` may take: each look starts a JVM, slow on a loaded machine. */
  private static final Duration LOOKS = Duration.ofSeconds(30);

  @TempDir Path dirA;
  @TempDir Path dirB;

  @Test
  void restartingAServerOnAnotherDataDirectory_leavesTheFirstServersRunsAndSessionsAlone()
      throws Exception {
    try (RawMcpClient a = new RawMcpClient(dirA)) {
      a.initialize();
      a.call("run_python", Map.of("session_id", "keep", "code", "x = 41"), 60);
      int oneShot =
          a.callLater(
              "run_python", Map.of("code", "import time\ntime.sleep(12)\nprint('one-shot done')"));
      int inSession =
          a.callLater(
              "run_python",
              Map.of(
                  "session_id",
                  "busy",
                  "code",
                  "import time\ntime.sleep(12)\nprint('session done')"));
      Await.untilChecked("both slow runs running", LOOKS, () -> runningCount(dirA), n -> n == 2);
      // Servers starting and stopping on another data directory (each one-shot run is one, with
      // its start-up hygiene), and commands that look at this one's.
      for (int i = 0; i < 2; i++) {
        ServerProcess.Result r = ServerProcess.run(dirB, null, "run", "-c", "print(" + i + ")");
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(i + "\n");
      }
      for (List<String> look :
          List.of(List.of("runs", "list"), List.of("sessions", "list"), List.of("doctor"))) {
        ServerProcess.run(dirA, null, look.toArray(String[]::new));
      }
      JsonNode first = a.answer(oneShot, 60).path("result").path("structuredContent");
      JsonNode second = a.answer(inSession, 60).path("result").path("structuredContent");
      assertThat(first.path("status").asText()).as(first.toString()).isEqualTo("succeeded");
      assertThat(first.path("stdout").asText()).isEqualTo("one-shot done\n");
      assertThat(second.path("status").asText()).as(second.toString()).isEqualTo("succeeded");
      JsonNode x = a.call("run_python", Map.of("session_id", "keep", "code", "x + 1"), 60);
      assertThat(
              x.path("result").path("structuredContent").path("result").path("text/plain").asText())
          .as(x.toString())
          .isEqualTo("42");
    }
  }

  @Test
  void commandsThatOnlyLook_neverCleanUpAfterADeadServer() throws Exception {
    Process server =
        new ProcessBuilder(
                TestServices.launcher().toString(), "serve", "--data-dir", dirA.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    String marker = "look-marker-" + System.nanoTime();
    String requests =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n"
            + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
            + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\",\"arguments\":{\"code\":\"import time\\n"
            + marker.replace('-', '_')
            + " = 1\\ntime.sleep(600)\"}}}\n";
    server.getOutputStream().write(requests.getBytes(StandardCharsets.UTF_8));
    server.getOutputStream().flush();
    try {
      Await.untilChecked("the run started", LOOKS, () -> runningCount(dirA), n -> n > 0);
    } finally {
      server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    List<Path> groupsLeft = scopeGroups(dirA);
    assertThat(groupsLeft).as("a server killed with -9 leaves its cgroups").isNotEmpty();
    for (List<String> look :
        List.of(
            List.of("runs", "list"),
            List.of("sessions", "list"),
            List.of("doctor"),
            List.of("config"))) {
      ServerProcess.run(dirA, null, look.toArray(String[]::new));
    }
    assertThat(runningRecorded(dirA))
        .as("the dead server's run is still recorded running")
        .isTrue();
    assertThat(scopeGroups(dirA)).containsAll(groupsLeft);
    // A server (here a one-shot run) is what cleans up.
    assertThat(ServerProcess.run(dirA, null, "run", "-c", "print(1)").exit()).isZero();
    assertThat(runningRecorded(dirA)).isFalse();
    assertThat(scopeGroups(dirA)).isEmpty();
    assertThat(ProcessTable.withCommandLineContaining(dirA.toString())).isEmpty();
  }

  @Test
  void twoServersSharingADataDirectory_answerTheOthersClosedAndKilledSessionsAsEnded()
      throws Exception {
    try (RawMcpClient a = new RawMcpClient(dirA);
        RawMcpClient b = new RawMcpClient(dirA)) {
      a.initialize();
      b.initialize();
      a.call("run_python", Map.of("session_id", "shut", "code", "x = 1"), 60);
      a.call("close_session", Map.of("session_id", "shut"), 60);
      JsonNode closed =
          b.call("run_python", Map.of("session_id", "shut", "code", "print(x)"), 60).path("result");
      assertThat(closed.path("isError").asBoolean()).as(closed.toString()).isTrue();
      JsonNode error = closed.path("structuredContent").path("error");
      assertThat(error.path("code").asText()).isEqualTo("session_closed");
      assertThat(error.path("message").asText())
          .startsWith("session 'shut' was closed at ")
          .contains("by close_session");

      a.call("run_python", Map.of("session_id", "held", "code", "y = 1"), 60);
      a.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL
      JsonNode lost =
          b.call("run_python", Map.of("session_id", "held", "code", "print(y)"), 60)
              .path("result")
              .path("structuredContent")
              .path("error");
      assertThat(lost.path("code").asText()).as(lost.toString()).isEqualTo("session_lost");
      assertThat(lost.path("message").asText())
          .startsWith("session 'held' was lost at ")
          .contains(") stopped while it was open (last used at ");
      JsonNode fresh =
          b.call("run_python", Map.of("session_id", "fresh", "code", "print(5)"), 60)
              .path("result")
              .path("structuredContent");
      assertThat(fresh.path("stdout").asText()).isEqualTo("5\n");
    }
  }

  private static boolean runningRecorded(Path dataDir) throws Exception {
    return runningCount(dataDir) > 0;
  }

  /** How many runs the data directory records as running, read with the CLI (a look only). */
  private static int runningCount(Path dataDir) throws Exception {
    ServerProcess.Result r =
        ServerProcess.run(dataDir, null, "runs", "list", "--status", "running", "--json");
    return r.stdout().split("\"status\" : \"running\"", -1).length - 1;
  }

  /** The per-server cgroups of this data directory (memory hierarchy, v1). */
  static List<Path> scopeGroups(Path dataDir) throws Exception {
    String scope = new dev.pysandbox.config.DataLayout(dataDir).identity();
    Path own = null;
    for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
      String[] f = line.split(":", 3);
      if (List.of(f[1].split(",")).contains("memory")) {
        own = Path.of("/sys/fs/cgroup/memory", f[2].substring(1));
      }
    }
    assertThat(own).isNotNull();
    try (Stream<Path> s = Files.list(own)) {
      return s.filter(p -> p.getFileName().toString().startsWith("pysandbox-" + scope + "-"))
          .toList();
    }
  }
}

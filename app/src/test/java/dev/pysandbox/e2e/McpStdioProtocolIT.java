package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.backend.ProcessTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stdio connection as clients really use it: started from {@code /}, fed malformed lines,
 * oversized messages and concurrent calls, cancelled, and closed mid-run. Each case here hung or
 * killed the connection before the server had its own transport.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class McpStdioProtocolIT {
  @TempDir Path dataDir;

  @Test
  void malformedLines_areAnsweredWithJsonRpcErrors_andTheServerGoesOn() throws Exception {
    try (RawMcpClient c = new RawMcpClient(dataDir)) {
      c.initialize();
      String[][] cases = {
        {"", "-32700"},
        {"this is not json", "-32700"},
        {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/li", "-32700"},
        {"[{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}]", "-32600"},
        {"{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", "-32600"},
        {"42", "-32600"},
      };
      for (String[] bad : cases) {
        c.sendLine(bad[0]);
        JsonNode error = c.answerWithoutId(30);
        assertThat(error.path("error").path("code").asText()).as(bad[0]).isEqualTo(bad[1]);
        assertThat(error.has("id")).as("id is present, and null").isTrue();
        JsonNode pong = c.request("ping", null, 30);
        assertThat(pong.has("result")).as("answered after " + bad[0]).isTrue();
      }
      c.sendLine("{\"id\":77,\"method\":\"ping\"}");
      assertThat(c.answer(77, 30).path("error").path("code").asInt()).isEqualTo(-32600);
      assertThat(c.call("list_runs", Map.of(), 30).path("result").path("isError").asBoolean())
          .isFalse();
      assertThat(c.stdoutLines)
          .allSatisfy(
              l ->
                  assertThat(RawMcpClient.JSON.readTree(l).path("jsonrpc").asText())
                      .isEqualTo("2.0"));
    }
  }

  @Test
  void badToolCalls_getErrorsInTheProjectsWords_neverJava() throws Exception {
    try (RawMcpClient c = new RawMcpClient(dataDir)) {
      c.initialize();
      List<JsonNode> answers = new ArrayList<>();
      answers.add(c.request("tools/call", null, 30));
      answers.add(c.request("tools/call", Map.of("name", "run_python", "arguments", "x"), 30));
      answers.add(c.request("tools/call", Map.of("name", "no_such_tool"), 30));
      answers.add(c.request("tools/call", Map.of("arguments", Map.of()), 30));
      answers.add(c.request("initialize", Map.of("protocolVersion", 5), 30));
      for (JsonNode a : answers) {
        assertThat(a.path("error").path("code").asInt()).as(a.toString()).isEqualTo(-32602);
      }
      assertThat(answers.get(2).path("error").path("message").asText())
          .contains("no_such_tool")
          .doesNotContain("invalid_tool_name");
      JsonNode wrongType = c.call("run_python", Map.of("code", 42), 30);
      JsonNode noArgs = c.call("check_setup", Map.of("x", 1), 30);
      assertThat(
              wrongType
                  .path("result")
                  .path("structuredContent")
                  .path("error")
                  .path("message")
                  .asText())
          .contains("must be a string, got a number");
      assertThat(
              noArgs
                  .path("result")
                  .path("structuredContent")
                  .path("error")
                  .path("message")
                  .asText())
          .contains("takes no arguments")
          .doesNotContain("accepted: )");
      for (String line : c.stdoutLines) {
        assertThat(line)
            .doesNotContain("java.")
            .doesNotContain("Exception")
            .doesNotContain("got a String");
      }
    }
  }

  @Test
  void twentyMegabyteUpload_works_andAnOversizedMessageIsRefusedWithItsId() throws Exception {
    byte[] data = new byte[20_000_000];
    new Random(7).nextBytes(data);
    String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    try (RawMcpClient c = new RawMcpClient(dataDir)) {
      c.initialize();
      JsonNode up =
          c.call(
              "upload_file",
              Map.of(
                  "session_id",
                  "big",
                  "filename",
                  "data.bin",
                  "content_base64",
                  Base64.getEncoder().encodeToString(data)),
              120);
      JsonNode result = up.path("result").path("structuredContent");
      assertThat(result.path("size_bytes").asLong()).as(up.toString()).isEqualTo(20_000_000L);
      assertThat(result.path("sha256").asText()).isEqualTo(sha);
      JsonNode run =
          c.call(
              "run_python",
              Map.of("session_id", "big", "code", "import os\nos.path.getsize('data.bin')"),
              60);
      assertThat(
              run.path("result")
                  .path("structuredContent")
                  .path("result")
                  .path("text/plain")
                  .asText())
          .isEqualTo("20000000");
    }
    // A server that takes uploads up to 1 MB refuses a 3 MB message, answers it, and goes on.
    try (RawMcpClient c = new RawMcpClient(dataDir, "upload_max_bytes=1000000")) {
      c.initialize();
      String huge =
          "{\"jsonrpc\":\"2.0\",\"id\":4242,\"method\":\"tools/call\",\"params\":{\"name\":"
              + "\"upload_file\",\"arguments\":{\"session_id\":\"s\",\"filename\":\"x\","
              + "\"content\":\""
              + "a".repeat(3_000_000)
              + "\"}}}";
      c.sendLine(huge);
      JsonNode refused = c.answer(4242, 60);
      assertThat(refused.path("error").path("code").asInt()).isEqualTo(-32600);
      assertThat(refused.path("error").path("message").asText()).contains("over the limit");
      assertThat(c.request("ping", null, 30).has("result")).isTrue();
    }
  }

  @Test
  void manyCallsInFlight_areAllAnsweredRight() throws Exception {
    int sessions = 16;
    int rounds = 20;
    try (RawMcpClient c = new RawMcpClient(dataDir, "max_sessions=20")) {
      c.initialize();
      for (int s = 0; s < sessions; s++) {
        c.call("create_session", Map.of("session_id", "c" + s), 60);
      }
      for (int round = 1; round <= rounds; round++) {
        int[] ids = new int[sessions];
        for (int s = 0; s < sessions; s++) {
          ids[s] =
              c.callLater(
                  "run_python",
                  Map.of("session_id", "c" + s, "code", "n = globals().get('n', 0) + 1\nn"));
        }
        for (int s = 0; s < sessions; s++) {
          JsonNode a = c.answer(ids[s], 60);
          assertThat(
                  a.path("result")
                      .path("structuredContent")
                      .path("result")
                      .path("text/plain")
                      .asText())
              .as(a.toString())
              .isEqualTo(Integer.toString(round));
        }
      }
    }
  }

  @Test
  void cancelledNotification_stopsTheRun_andItsAnswerIsNotSent() throws Exception {
    try (RawMcpClient c = new RawMcpClient(dataDir)) {
      c.initialize();
      c.call("create_session", Map.of("session_id", "k"), 60);
      int id =
          c.callLater(
              "run_python",
              Map.of(
                  "session_id",
                  "k",
                  "code",
                  "import time\nopen('started', 'w').close()\n"
                      + "for i in range(600): time.sleep(0.1)"));
      awaitWorkspaceFile("started");
      c.sendLine(
          "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
              + id
              + ",\"reason\":\"user abort\"}}");
      JsonNode after =
          Await.untilChecked(
              "session k runs code again",
              () -> c.call("run_python", Map.of("session_id", "k", "code", "print('after')"), 30),
              r -> !r.path("result").path("isError").asBoolean());
      assertThat(after.path("result").path("structuredContent").path("stdout").asText())
          .as("the session is free again: " + after)
          .isEqualTo("after\n");
      JsonNode runs = c.call("list_runs", Map.of("session_id", "k"), 30);
      assertThat(runs.path("result").path("structuredContent").path("runs").toString())
          .contains("\"cancelled\"");
      assertThat(c.answered(id, 1000)).as("no answer to a cancelled request").isFalse();
    }
  }

  @Test
  void endOfStdin_endsTheServerWithinASecond_withItsRunsInterruptedAndNoSandboxLeft()
      throws Exception {
    String marker = "eof-marker-" + System.nanoTime();
    RawMcpClient c = new RawMcpClient(dataDir);
    try {
      c.initialize();
      c.call("create_session", Map.of("session_id", "e"), 60);
      String code =
          "import time\nopen('started', 'w').close()\n"
              + marker.replace('-', '_')
              + " = 1\ntime.sleep(600)";
      int inSession = c.callLater("run_python", Map.of("session_id", "e", "code", code));
      int oneShot =
          c.callLater(
              "run_python",
              Map.of(
                  "code",
                  "import subprocess, time\nsubprocess.Popen(['sh', '-c', 'sleep 600', '"
                      + marker
                      + "'])\ntime.sleep(600)"));
      Await.until(
          "the one-shot run started its child",
          () -> ProcessTable.withCommandLineContaining(marker),
          pids -> !pids.isEmpty());
      awaitWorkspaceFile("started");
      c.closeStdin();
      assertThat(c.process.waitFor(10, TimeUnit.SECONDS)).as("exited after end of stdin").isTrue();
      for (int id : new int[] {inSession, oneShot}) {
        JsonNode answer = c.answer(id, 5).path("result").path("structuredContent");
        assertThat(answer.path("status").asText())
            .as("answered before exit")
            .isEqualTo("interrupted");
        assertThat(answer.path("message").asText()).contains("closed the connection");
      }
      assertThat(ProcessTable.withCommandLineContaining(marker)).isEmpty();
      assertThat(ProcessTable.withCommandLineContaining(dataDir.toString())).isEmpty();
      assertThat(TwoServersIT.scopeGroups(dataDir))
          .as("a clean stop removes its cgroups")
          .isEmpty();
    } finally {
      c.close();
    }
    ServerProcess.Result runs = ServerProcess.run(dataDir, null, "runs", "list", "--json");
    assertThat(runs.stdout()).doesNotContain("\"running\"");
    assertThat(runs.stdout().split("\"interrupted\"", -1)).hasSize(3);
  }

  @Test
  void endOfStdin_withManySessions_leavesNoMountPointBehind() throws Exception {
    int sessions = 30;
    RawMcpClient c = new RawMcpClient(dataDir, "max_sessions=40");
    try {
      c.initialize();
      for (int i = 0; i < sessions; i++) {
        JsonNode made = c.call("create_session", Map.of("session_id", "m" + i), 60);
        assertThat(made.path("result").path("isError").asBoolean()).as(made.toString()).isFalse();
      }
      assertThat(mountsUnder(dataDir))
          .as("each session's workspace is a mounted image")
          .isNotEmpty();
      long eof = System.nanoTime();
      c.closeStdin();
      assertThat(c.process.waitFor(15, TimeUnit.SECONDS)).as("exited").isTrue();
      System.out.println(
          "exit after end of stdin with "
              + sessions
              + " sessions: "
              + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - eof)
              + " ms");
      assertThat(mountsUnder(dataDir)).as("mount points left on the host").isEmpty();
    } finally {
      c.close();
    }
  }

  /**
   * A client that gives up on a slow shutdown kills the server outright (the TypeScript SDK does, 4
   * s after closing stdin): the launcher outlives it just long enough to kill every sandbox and
   * unmount every workspace, so the data directory can be deleted at once.
   */
  @Test
  void serverKilled_withSessions_leavesNoSandboxAndNoMountPointBehind() throws Exception {
    int sessions = 20;
    RawMcpClient c = new RawMcpClient(dataDir, "max_sessions=40");
    try {
      c.initialize();
      for (int i = 0; i < sessions; i++) {
        JsonNode made = c.call("create_session", Map.of("session_id", "k" + i), 60);
        assertThat(made.path("result").path("isError").asBoolean()).as(made.toString()).isFalse();
      }
      List<ProcessHandle> below = c.process.descendants().toList();
      assertThat(below).as("the launcher and the sandboxes").hasSizeGreaterThan(sessions);
      ProcessHandle launcher =
          below.stream()
              .filter(p -> p.parent().map(q -> q.pid() == c.process.pid()).orElse(false))
              .findFirst()
              .orElseThrow();
      List<ProcessHandle> sandboxes = below.stream().filter(p -> !p.equals(launcher)).toList();
      assertThat(mountsUnder(dataDir)).isNotEmpty();
      long kill = System.nanoTime();
      c.process.destroyForcibly();
      assertThat(c.process.waitFor(10, TimeUnit.SECONDS)).as("killed").isTrue();
      Await.untilChecked(
          "the sandboxes and their mount points gone",
          () ->
              sandboxes.stream().anyMatch(ProcessHandle::isAlive)
                  || !mountsUnder(dataDir).isEmpty(),
          left -> !left);
      System.out.println(
          "after SIGKILL of the server with "
              + sessions
              + " sessions, sandboxes and mount points gone in "
              + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - kill)
              + " ms");
      assertThat(sandboxes.stream().filter(ProcessHandle::isAlive).map(ProcessHandle::pid))
          .as("sandbox processes left alive")
          .isEmpty();
      // Deleting the images after that takes a little longer; then the launcher is gone too.
      assertThat(launcher.onExit().get(30, TimeUnit.SECONDS).isAlive()).isFalse();
      assertThat(mountsUnder(dataDir)).as("mount points left on the host").isEmpty();
    } finally {
      c.close();
    }
  }

  /** Mount points under {@code dir} in this process's mount namespace (the server's too). */
  /** Waits until a session's workspace (a mount on the host) holds {@code name}. */
  private void awaitWorkspaceFile(String name) throws InterruptedException {
    Await.untilChecked(
        "a workspace holding " + name,
        () -> {
          try (Stream<Path> dirs = Files.list(dataDir.resolve("sandbox/workspaces"))) {
            return dirs.anyMatch(d -> Files.exists(d.resolve(name)));
          }
        },
        found -> found);
  }

  static List<String> mountsUnder(Path dir) throws java.io.IOException {
    String prefix = dir.toRealPath() + "/";
    List<String> found = new ArrayList<>();
    for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      String[] f = line.split(" ");
      if (f.length > 4 && f[4].startsWith(prefix)) {
        found.add(f[4]);
      }
    }
    return found;
  }
}

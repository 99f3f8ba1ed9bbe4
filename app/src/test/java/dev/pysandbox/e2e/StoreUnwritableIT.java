package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.LoopFileSystem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression (issue 23): the server died with SIGBUS inside SQLite when {@code pysandbox.db-shm}
 * could no longer be written (SQLite maps it; a write to a page of a file made immutable is a
 * SIGBUS), every session was lost, and the JVM's crash report went to stdout, on the MCP channel.
 * The real server over stdio, real faults: {@code chattr +i}, read-only bind mounts, a signal.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class StoreUnwritableIT {
  @TempDir Path dataDir;
  private final List<String[]> undo = new ArrayList<>();

  @AfterEach
  void undoFaults() throws Exception {
    for (int i = undo.size() - 1; i >= 0; i--) {
      try {
        LoopFileSystem.run(undo.get(i));
      } catch (IOException e) {
        // already undone by the test
      }
    }
  }

  @Test
  void sharedMemoryMadeImmutable_callsFailWithStoreUnavailable_andWorkAgain_sessionsKept()
      throws Exception {
    try (RawMcpClient c = new RawMcpClient(dataDir)) {
      c.initialize();
      JsonNode first = c.call("run_python", Map.of("code", "x = 41", "session_id", "s"), 90);
      assertThat(first.at("/result/structuredContent/status").asText())
          .as(first.toString())
          .isEqualTo("succeeded");
      settled(c, first.at("/result/structuredContent/run_id").asText());
      Path shm = dataDir.resolve("pysandbox.db-shm");
      fault("chattr", "+i", shm.toString());
      undo.add(new String[] {"chattr", "-i", shm.toString()});
      // Written back: SQLite's next write to a page of its mapping asks the file system again.
      LoopFileSystem.run("sync");

      for (String session : List.of("s", "t", "u")) {
        JsonNode r = c.call("run_python", Map.of("code", "print(1)", "session_id", session), 60);
        assertStoreUnavailable(r, "pysandbox.db-shm");
      }
      assertStoreUnavailable(c.call("list_runs", Map.of(), 60), "pysandbox.db-shm");
      assertThat(c.process.isAlive()).as("the server is alive").isTrue();

      LoopFileSystem.run("chattr", "-i", shm.toString());
      JsonNode again = c.call("run_python", Map.of("code", "print(x + 1)", "session_id", "s"), 90);
      assertThat(again.at("/result/structuredContent/stdout").asText())
          .as("the session lived through it: " + again)
          .isEqualTo("42\n");
      assertOnlyJsonRpc(c);
    }
  }

  @Test
  void databaseWalAndShmReadOnlyBindMounts_callsFailWithStoreUnavailable_andWorkAgain()
      throws Exception {
    try (RawMcpClient c = new RawMcpClient(dataDir)) {
      c.initialize();
      c.call("run_python", Map.of("code", "y = 1", "session_id", "s"), 90);
      for (String name : List.of("pysandbox.db", "pysandbox.db-wal", "pysandbox.db-shm")) {
        String f = dataDir.resolve(name).toString();
        fault("mount", "--bind", f, f);
        undo.add(new String[] {"umount", "-l", f});
        fault("mount", "-o", "remount,ro,bind", f);
      }
      LoopFileSystem.run("sync");
      assertStoreUnavailable(
          c.call("run_python", Map.of("code", "print(y)", "session_id", "s"), 60),
          "Read-only file system");
      for (String name : List.of("pysandbox.db", "pysandbox.db-wal", "pysandbox.db-shm")) {
        LoopFileSystem.run("umount", dataDir.resolve(name).toString());
      }
      JsonNode again = c.call("run_python", Map.of("code", "print(y)", "session_id", "s"), 90);
      assertThat(again.at("/result/structuredContent/stdout").asText()).isEqualTo("1\n");
      assertOnlyJsonRpc(c);
    }
  }

  @Test
  void aDatabaseThatCannotBeWritten_atStart_isOneLineOnStderr_andExitCode7() throws Exception {
    try (RawMcpClient first = new RawMcpClient(dataDir)) {
      first.initialize();
      first.call("run_python", Map.of("code", "print(1)"), 90);
    }
    Path db = dataDir.resolve("pysandbox.db");
    fault("chattr", "+i", db.toString());
    undo.add(new String[] {"chattr", "-i", db.toString()});

    ServerProcess.Result r = ServerProcess.run(dataDir, "", "serve");
    assertThat(r.exit()).isEqualTo(7);
    assertThat(r.stdout()).isEmpty();
    assertThat(r.stderr().strip().lines())
        .singleElement()
        .asString()
        .startsWith("pysandbox: store_unavailable: " + db + " cannot be written");
  }

  @Test
  void aFatalErrorOfTheJvm_isReportedOnStderrAndInTheDataDirectory_neverOnStdout()
      throws Exception {
    try (RawMcpClient c = new RawMcpClient(dataDir)) {
      c.initialize();
      long pid = c.process.pid();
      fault("kill", "-BUS", Long.toString(pid));
      assertThat(c.process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(c.process.exitValue()).isNotZero();
      c.awaitOutputClosed(30);
      assertOnlyJsonRpc(c);
      assertThat(String.join("\n", c.stderrLines))
          .contains("A fatal error has been detected by the Java Runtime Environment");
      assertThat(dataDir.resolve("logs").resolve("hs_err_pid" + pid + ".log")).isRegularFile();
    }
  }

  /**
   * Waits until the server's own work after the run (its seal into the hash chain, its notebook) is
   * done, so that the fault below meets calls, not a background write already past its check
   * (StoreFiles: that window is what no check can close).
   */
  private void settled(RawMcpClient c, String runId) throws InterruptedException {
    Path notebook = dataDir.resolve("runs").resolve(runId).resolve("notebook.ipynb");
    Await.until(
        "run " + runId + " sealed and its notebook written",
        () -> {
          try {
            return c.call("get_run", Map.of("run_id", runId), 30);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        },
        r ->
            !r.at("/result/structuredContent/record_sha256").asText().isEmpty()
                && Files.isRegularFile(notebook));
  }

  private static void fault(String... command) throws Exception {
    LoopFileSystem.run(command);
  }

  private static void assertStoreUnavailable(JsonNode answer, String names) {
    JsonNode error = answer.at("/result/structuredContent/error");
    assertThat(error.path("code").asText()).as(answer.toString()).isEqualTo("store_unavailable");
    assertThat(error.path("message").asText()).contains(names);
    assertThat(error.path("retryable").asBoolean()).isTrue();
  }

  private static void assertOnlyJsonRpc(RawMcpClient c) {
    assertThat(c.stdoutLines).isNotEmpty();
    assertThat(c.stdoutLines)
        .allSatisfy(
            line -> {
              JsonNode msg;
              try {
                msg = RawMcpClient.JSON.readTree(line);
              } catch (IOException e) {
                msg = null;
              }
              assertThat(msg).as("a line on stdout that is not JSON: " + line).isNotNull();
              assertThat(msg.path("jsonrpc").asText()).as(line).isEqualTo("2.0");
            });
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.backend.ProcessTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's own machinery failing or being replaced under its runs: the launcher started by a
 * thread that ends, the launcher killed, a session's sandbox dying while idle, a store that cannot
 * open, two servers sharing a data directory.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class ServerLifecycleTest {
  @TempDir Path dataDir;

  /**
   * Regression: PR_SET_PDEATHSIG fires when the <em>thread</em> that started the launcher ends (a
   * pooled thread retires after 60 s idle), which killed every sandbox, runs and sessions alike.
   */
  @Test
  void launcherStartedByAThreadThatEnds_outlivesThatThread_withItsSessions() throws Exception {
    try (DefaultSandboxService service =
        Assembly.create(
            TestServices.config(dataDir, Map.of("pool_size", "0")), Clock.systemUTC())) {
      Thread starter =
          new Thread(
              () -> service.run(new ExecutionRequest("x = 41", "kept", null, null)), "short-lived");
      starter.start();
      starter.join();
      // Gone from the kernel too: that is when PR_SET_PDEATHSIG would fire.
      Await.untilChecked(
          "the thread 'short-lived' has left this process",
          ServerLifecycleTest::threadNames,
          names -> !names.contains("short-lived"));
      RunRecord r = service.run(new ExecutionRequest("x + 1", "kept", null, null));
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.result()).containsEntry("text/plain", "42");
    }
  }

  @Test
  void killedLauncher_interruptsRunsWithTheCause_andThePoolRefillsByItself() throws Exception {
    try (DefaultSandboxService service = TestServices.start(dataDir, Map.of("pool_size", "1"))) {
      service.run(new ExecutionRequest("x = 1", "k", null, null));
      CompletableFuture<RunRecord> running =
          CompletableFuture.supplyAsync(
              () ->
                  service.run(new ExecutionRequest("import time\ntime.sleep(60)", "k", null, 90)));
      awaitRunning(service);
      List<Long> launchers = ProcessTable.withCommandLineContaining(dataDir + "/run/launcher-");
      assertThat(launchers).hasSize(1);
      ProcessTable.killNow(launchers.get(0));
      RunRecord r = running.get(30, TimeUnit.SECONDS);
      assertThat(r.status()).isEqualTo(RunStatus.INTERRUPTED);
      assertThat(r.message()).contains("launcher").contains("killed by signal 9");
      Await.until(
          "the pool refilled without a call",
          Duration.ofSeconds(20),
          () -> readyInPool(service),
          ready -> ready >= 1);
      assertThatThrownBy(() -> service.getContext("k", null))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.SESSION_DEAD));
      assertThat(service.run(ExecutionRequest.of("print(2)")).stdout()).isEqualTo("2\n");
    }
  }

  @Test
  void sessionWhoseSandboxDiesWhileIdle_answersSessionDead_toEveryCall() throws Exception {
    try (DefaultSandboxService service = TestServices.start(dataDir, Map.of("pool_size", "0"))) {
      service.run(new ExecutionRequest("x = 41", "idle", null, null));
      Path workspace;
      try (var dirs = Files.list(dataDir.resolve("sandbox/workspaces"))) {
        workspace = dirs.findFirst().orElseThrow();
      }
      ProcessTable.withCommandLineContaining(workspace.getFileName().toString())
          .forEach(ProcessTable::killNow);
      Await.until(
          "the server saw session idle's sandbox die",
          () -> service.listSessions().get(0).state(),
          state -> state == SessionState.DEAD);
      for (Runnable call :
          List.<Runnable>of(
              () -> service.getContext("idle", null),
              () -> service.setContext("idle", Map.of("y", 1)),
              () -> service.run(new ExecutionRequest("x + 1", "idle", null, null)))) {
        assertThatThrownBy(call::run)
            .isInstanceOfSatisfying(
                PysandboxException.class,
                e -> {
                  assertThat(e.code()).isEqualTo(ErrorCode.SESSION_DEAD);
                  assertThat(e.getMessage()).contains("while the session was idle");
                });
      }
    }
  }

  @Test
  void storeThatCannotOpen_makesCheckSetupNotReady_andIsRetried() throws Exception {
    Files.createDirectories(dataDir.resolve("pysandbox.db")); // a directory: SQLite cannot open it
    try (DefaultSandboxService service =
        Assembly.create(
            TestServices.config(dataDir, Map.of("pool_size", "0")), Clock.systemUTC())) {
      service.startBackground();
      SetupReport report = service.checkSetup();
      assertThat(report.ready()).isFalse();
      assertThat(report.problems()).anySatisfy(p -> assertThat(p).contains("run store"));
      Files.delete(dataDir.resolve("pysandbox.db"));
      // Retried after its back-off (real time: the service's own clock).
      Await.until("the store opened on a retry", () -> service.checkSetup().ready(), r -> r);
      assertThat(service.listRuns(new dev.pysandbox.api.RunQuery(5, 0, null, null)).total())
          .isZero();
      assertThat(service.checkSetup().ready()).isTrue();
    }
  }

  @Test
  void twoServersSharingADataDirectory_cannotBothOpenOneSessionId() throws Exception {
    try (DefaultSandboxService a = TestServices.start(dataDir, Map.of("pool_size", "0"));
        DefaultSandboxService b = TestServices.start(dataDir, Map.of("pool_size", "0"))) {
      a.createSession("shared", null);
      assertThatThrownBy(() -> b.createSession("shared", null))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.SESSION_BUSY);
                assertThat(e.getMessage()).contains("another pysandbox server");
              });
      assertThatThrownBy(() -> b.run(new ExecutionRequest("1", "shared", null, null)))
          .isInstanceOf(PysandboxException.class);
      assertThat(b.listSessions()).isEmpty();
      a.closeSession("shared");
      // The close is recorded off the request path: b may refuse until it is.
      Await.until(
          "b opens the session a closed",
          () -> {
            try {
              return b.createSession("shared", null).state();
            } catch (PysandboxException e) {
              return null;
            }
          },
          state -> state == SessionState.IDLE);
    }
  }

  /**
   * The data directory's file system fills while a run is in flight (sandboxed code can do that,
   * within its quota, when workspaces share it): the run still answers, an upload is disk_full
   * naming the file system (not "internal"), and once space returns the run's final state is
   * recorded without a restart.
   */
  @Test
  void fullDisk_runInFlightIsRecordedOnceSpaceReturns_andUploadsSayWhy() throws Exception {
    Path fs = Files.createDirectories(dataDir.resolve("small"));
    assertThat(command("mount", "-t", "tmpfs", "-o", "size=48m", "pysandbox-test", fs.toString()))
        .as("mount a 48 MiB tmpfs (the test needs root)")
        .isZero();
    Path filler = fs.resolve("filler");
    try (DefaultSandboxService service =
        // Plain workspaces on the full disk: an image's writes would reach the disk only later.
        TestServices.start(fs.resolve("data"), Map.of("pool_size", "0", "disk_quota_fs", "off"))) {
      service.run(new ExecutionRequest("x = 1", "full", null, null));
      CompletableFuture<RunRecord> running =
          CompletableFuture.supplyAsync(
              () ->
                  service.run(
                      new ExecutionRequest(
                          "import os, time\nopen('hold', 'w').close()\n"
                              + "while os.path.exists('hold'):\n    time.sleep(0.05)\n"
                              + "print('done')",
                          "full",
                          null,
                          30)));
      // The run goes on until the test lets it: after the disk is full, however long that takes.
      Path hold =
          Await.untilChecked(
                  "the run holds in its workspace",
                  () -> {
                    try (var dirs = Files.list(fs.resolve("data/sandbox/workspaces"))) {
                      return dirs.map(d -> d.resolve("hold")).filter(Files::exists).toList();
                    }
                  },
                  found -> !found.isEmpty())
              .get(0);
      command("fallocate", "-l", "100m", filler.toString()); // fails part-way: the disk is full
      command("sh", "-c", "cat /dev/zero > " + filler + " 2>/dev/null");
      Files.delete(hold);
      RunRecord r = running.get(30, TimeUnit.SECONDS);
      assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(service.getRun(r.runId(), false).status())
          .as("the store could not record it yet")
          .isEqualTo(RunStatus.RUNNING);
      assertThatThrownBy(
              () ->
                  service.uploadFile(
                      new dev.pysandbox.api.UploadRequest(
                          "full", "big.bin", "x".repeat(1 << 20), null, false)))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.DISK_FULL);
                assertThat(e.retryable()).isTrue();
                assertThat(e.getMessage())
                    .contains("no space left")
                    .contains("the file system " + fs)
                    .contains("nothing was kept");
              });
      Files.delete(filler);
      Await.until(
          "recorded once space returned",
          () -> service.getRun(r.runId(), false).status(),
          status -> status != RunStatus.RUNNING);
      assertThat(service.getRun(r.runId(), false).stdout()).isEqualTo("done\n");
      assertThat(service.run(new ExecutionRequest("x + 1", "full", null, null)).result())
          .containsEntry("text/plain", "2");
    } finally {
      Files.deleteIfExists(filler);
      command("umount", "-l", fs.toString());
    }
  }

  private static int command(String... argv) throws Exception {
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return p.exitValue();
  }

  /** Waits until a run of this service is running (its sandbox has the code). */
  private static void awaitRunning(DefaultSandboxService service) throws InterruptedException {
    Await.until(
        "a run is running",
        () -> service.listRuns(new RunQuery(1, 0, RunStatus.RUNNING, null)).runs(),
        runs -> !runs.isEmpty());
  }

  /** The names of this process's threads as the kernel has them (15 characters at most). */
  private static List<String> threadNames() throws Exception {
    List<String> names = new ArrayList<>();
    try (var tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path task : tasks.toList()) {
        try {
          names.add(Files.readString(task.resolve("comm")).strip());
        } catch (java.nio.file.NoSuchFileException gone) {
          // the thread ended while listed
        }
      }
    }
    return names;
  }

  private static int readyInPool(DefaultSandboxService service) {
    return ((Number) service.checkSetup().pool().get("ready")).intValue();
  }
}

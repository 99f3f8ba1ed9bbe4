package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.ManualTime;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.store.SessionKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Sessions in real sandboxes: state, isolation, busy and dead sessions, limits, expiry. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Sandboxed
class SessionTest {
  @TempDir Path dataDir;
  ManualTime clock = ManualTime.wallOnly(Instant.parse("2026-11-22T10:00:00Z"));
  DefaultSandboxService service;
  ExecutorService threads = Executors.newCachedThreadPool();

  @BeforeEach
  void start() {
    service =
        Assembly.create(
            TestServices.config(dataDir, Map.of("max_sessions", "4", "cancel_grace", "1")), clock);
    service.startBackground();
    service.awaitStarted();
  }

  @AfterEach
  void stop() {
    threads.shutdownNow();
    service.close();
  }

  RunRecord run(String session, String code) {
    return service.run(new ExecutionRequest(code, session, null, null));
  }

  RunRecord run(String session, String code, int timeout) {
    return service.run(new ExecutionRequest(code, session, null, timeout));
  }

  static ErrorCode codeOf(Throwable t) {
    return ((PysandboxException) t).code();
  }

  @Test
  void globalsPersist_betweenCalls() {
    run("s1", "x = 10");
    assertThat(run("s1", "x * 2").result()).containsEntry("text/plain", "20");
    run("s1", "y = 1");
    assertThat(run("s1", "y = y + 1\nprint(y)").stdout()).isEqualTo("2\n");
    assertThat(run("s1", "y = y + 1\nprint(y)").stdout()).isEqualTo("3\n");
    assertThat(service.listSessions())
        .singleElement()
        .satisfies(s -> assertThat(s.runCount()).isEqualTo(5));
  }

  @Test
  void filesPersist_andEachRunReportsWhatItChanged() {
    service.createSession("files", null);
    RunRecord first = run("files", "print('nothing yet')");
    assertThat(first.artifacts()).isEmpty();
    RunRecord write =
        run("files", "open('a.txt', 'w').write('one')\nopen('b.txt', 'w').write('bee')");
    assertThat(write.artifacts())
        .extracting(a -> a.path() + ":" + a.change())
        .containsExactly("a.txt:created", "b.txt:created");
    RunRecord read =
        run(
            "files",
            "print(open('a.txt').read())\nopen('a.txt', 'w').write('two')\n"
                + "import os\nos.remove('b.txt')");
    assertThat(read.stdout()).isEqualTo("one\n");
    assertThat(read.artifacts())
        .extracting(a -> a.path() + ":" + a.change())
        .containsExactly("a.txt:modified", "b.txt:deleted");
    assertThat(service.readArtifact(write.runId(), null, "b.txt", 100).content())
        .as("a run's files are kept as it left them")
        .isEqualTo("bee");
    assertThat(service.readArtifact(null, "files", "a.txt", 100).content()).isEqualTo("two");
  }

  @Test
  void sessions_neverSeeEachOthersState() {
    run("alpha", "secret = 'alpha-only'\nopen('mine.txt', 'w').write('alpha')");
    RunRecord b = run("beta", "import os\nprint('secret' in globals(), os.listdir('.'))");
    assertThat(b.stdout()).isEqualTo("False []\n");
    RunRecord oneShot = service.run(ExecutionRequest.of("print('secret' in globals())"));
    assertThat(oneShot.stdout()).isEqualTo("False\n");
  }

  @Test
  void sessionLimits_areValidatedAgainstTheMaxima_andApplied() {
    for (LimitRequest bad :
        List.of(
            new LimitRequest(8192, null, null, null),
            new LimitRequest(16, null, null, null),
            new LimitRequest(null, 5000, null, null),
            new LimitRequest(null, null, 64.0, null),
            new LimitRequest(null, null, Double.NaN, null),
            new LimitRequest(null, null, null, 0))) {
      assertThatThrownBy(() -> service.createSession("limited-bad", null, bad))
          .isInstanceOf(PysandboxException.class)
          .satisfies(
              e ->
                  assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("the server's maximum");
    }
    assertThat(service.listSessions()).noneMatch(s -> s.sessionId().equals("limited-bad"));
    SessionInfo s = service.createSession("limited", null, new LimitRequest(256, 16, 0.5, 10));
    assertThat(s.limits())
        .containsEntry("memory_limit_mb", 256L)
        .containsEntry("pids_limit", 16)
        .containsEntry("cpu_limit", 0.5)
        .containsEntry("disk_quota_mb", 10L);
    RunRecord r =
        run(
            "limited",
            "import resource\nprint(resource.getrlimit(resource.RLIMIT_FSIZE)[0] // 2**20)\n"
                + "import threading, time\nts = []\n"
                + "try:\n    for _ in range(64):\n        t = threading.Thread(target=time.sleep, args=(5,)); t.start(); ts.append(t)\n"
                + "except RuntimeError as e:\n    print('threads refused at', len(ts))");
    assertThat(r.limits()).containsEntry("pids_limit", 16);
    assertThat(r.stdout()).startsWith("10\n");
    assertThat(r.killReason()).as(r.message()).isEqualTo(KillReason.PIDS_LIMIT);
    assertThat(r.peakMemoryBytes()).isPositive();
    service.closeSession("limited");
  }

  @Test
  void checkSetup_showsTheLimitsAndWhatEnforcesThem() {
    var limits = service.checkSetup().limits();
    assertThat(limits.get("sandbox_default").toString()).contains("memory_limit_mb=512");
    assertThat(limits.get("sandbox_max").toString()).contains("memory_limit_mb=4096");
    assertThat(limits.get("confinement").toString())
        .contains("cgroups=cgroup v1 (memory, pids")
        .contains("seccomp=on");
  }

  @Test
  void badSessionIds_areRefused_andNothingIsCreated() throws Exception {
    long before = Files.list(new dev.pysandbox.config.DataLayout(dataDir).workspacesDir()).count();
    // A name of its own: a /tmp/x another process made must not fail this test.
    String escape = "px" + Long.toString(System.nanoTime(), 36);
    for (String bad : List.of("../../tmp/" + escape, "has space", "x".repeat(65), "", "a/b", "é")) {
      assertThatThrownBy(() -> run(bad, "print(1)"))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
      assertThatThrownBy(() -> service.createSession(bad, null))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }
    assertThat(service.listSessions()).isEmpty();
    assertThat(Files.list(new dev.pysandbox.config.DataLayout(dataDir).workspacesDir()).count())
        .isEqualTo(before);
    assertThat(Files.exists(Path.of("/tmp/" + escape))).isFalse();
    assertThat(service.createSession("x".repeat(64), null).sessionId()).hasSize(64);
    assertThat(service.createSession(null, null).sessionId()).matches("sess_[0-9a-f]{12}");
  }

  @Test
  void secondCall_whileOneRuns_isSessionBusy_andCloseToo() throws Exception {
    service.createSession("busy", null);
    CompletableFuture<RunRecord> sleeping =
        CompletableFuture.supplyAsync(
            () -> run("busy", "import time\ntime.sleep(10)\n'woke'"), threads);
    awaitState("busy", "busy");
    assertThatThrownBy(() -> run("busy", "print(1)"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SESSION_BUSY))
        .hasMessageContaining("is busy");
    assertThatThrownBy(() -> service.closeSession("busy"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SESSION_BUSY));
    String runId = runningRun("busy");
    var cancel = service.cancelRun(runId);
    assertThat(cancel.cancelled()).isTrue();
    assertThat(sleeping.get(10, TimeUnit.SECONDS).status()).isEqualTo(RunStatus.CANCELLED);
  }

  @Test
  void cancel_raisesKeyboardInterrupt_andKeepsState() throws Exception {
    run("keep", "kept = 42");
    CompletableFuture<RunRecord> sleeping =
        CompletableFuture.supplyAsync(() -> run("keep", "import time\ntime.sleep(30)"), threads);
    awaitState("keep", "busy");
    String runId = runningRun("keep");
    var result = service.cancelRun(runId);
    assertThat(result.status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(result.message()).contains("KeyboardInterrupt");
    RunRecord cancelled = sleeping.get(10, TimeUnit.SECONDS);
    assertThat(cancelled.status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(cancelled.error().name()).isEqualTo("KeyboardInterrupt");
    assertThat(run("keep", "kept").result()).containsEntry("text/plain", "42");
    assertThat(service.cancelRun(runId).cancelled())
        .as("a cancelled run stays cancelled")
        .isFalse();
    assertThat(service.getRun(runId, false).status()).isEqualTo(RunStatus.CANCELLED);
  }

  /** Regression: a cancelled run's traceback ended in the runner's SIGIO handler. */
  @Test
  void cancel_tracebackEndsInUserCode_withoutTheRunnersFrames() throws Exception {
    CompletableFuture<RunRecord> looping =
        CompletableFuture.supplyAsync(
            () ->
                run(
                    "tb",
                    "import time\nopen('looping', 'w').close()\nwhile True:\n    time.sleep(0.01)"),
            threads);
    String runId = runningRun("tb");
    // In the loop of the user's code, not in the runner still starting it.
    Await.until(
        "session tb's workspace holds the file 'looping'",
        () -> service.listArtifacts(null, "tb").files().stream().map(f -> f.path()).toList(),
        paths -> paths.contains("looping"));
    assertThat(service.cancelRun(runId).status()).isEqualTo(RunStatus.CANCELLED);
    RunRecord cancelled = looping.get(10, TimeUnit.SECONDS);
    assertThat(cancelled.error().name()).isEqualTo("KeyboardInterrupt");
    assertThat(cancelled.error().traceback())
        .contains("KeyboardInterrupt")
        .contains("File \"<cell-1>\", line 4")
        .doesNotContain("runner.py", "on_sigio", "_take", "interrupt(");

    RunRecord failed = run("tb", "def f(x):\n    return 1 / x\n\nf(0)");
    assertThat(failed.error().name()).isEqualTo("ZeroDivisionError");
    assertThat(failed.error().traceback())
        .contains("File \"<cell-2>\", line 4", "f(0)", "File \"<cell-2>\", line 2", "return 1 / x")
        .endsWith("ZeroDivisionError: division by zero\n")
        .doesNotContain("runner.py");
  }

  @Test
  void cancel_ofCodeIgnoringInterrupt_killsTheSandbox_andTheSessionIsDead() throws Exception {
    run("stubborn", "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)");
    CompletableFuture<RunRecord> looping =
        CompletableFuture.supplyAsync(
            () ->
                run(
                    "stubborn",
                    "import time\nopen('started', 'w').close()\nwhile True:\n    time.sleep(0.01)"),
            threads);
    // Cancel once the loop runs (a cancel before the code starts stops it at once).
    Await.until(
        "session stubborn's workspace holds the file 'started'",
        () -> service.listArtifacts(null, "stubborn").files().stream().map(f -> f.path()).toList(),
        paths -> paths.contains("started"));
    var result = service.cancelRun(runningRun("stubborn"));
    assertThat(result.status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(result.message()).contains("killed");
    assertThat(looping.get(10, TimeUnit.SECONDS).status()).isEqualTo(RunStatus.CANCELLED);
    assertThatThrownBy(() -> run("stubborn", "print(1)"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SESSION_DEAD))
        .hasMessageContaining("killed");
    assertThat(state("stubborn")).isEqualTo("dead");
    service.closeSession("stubborn");
    assertThatThrownBy(() -> run("stubborn", "print(1)"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SESSION_CLOSED))
        .hasMessageContaining("its sandbox had died before: killed");
    service.createSession("stubborn", null);
    assertThat(run("stubborn", "print('fresh')").stdout()).isEqualTo("fresh\n");
  }

  @Test
  void timeout_killsTheSession_whichReportsWhy() {
    run("slow", "a = 1");
    assertThat(run("slow", "import time\ntime.sleep(60)", 1).status())
        .isEqualTo(RunStatus.TIMED_OUT);
    assertThatThrownBy(() -> run("slow", "a"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SESSION_DEAD))
        .hasMessageContaining("timeout");
    assertThat(service.listSessions())
        .singleElement()
        .satisfies(s -> assertThat(s.deadReason()).contains("timeout"));
  }

  @Test
  void maxSessions_refusesANewOne_butExistingOnesWork() {
    for (int i = 0; i < 4; i++) {
      service.createSession("m" + i, null);
    }
    assertThatThrownBy(() -> service.createSession("m4", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.MAX_SESSIONS))
        .hasMessageContaining("max_sessions is 4");
    assertThatThrownBy(() -> run("m5", "print(1)"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.MAX_SESSIONS));
    assertThat(run("m0", "print('still fine')").stdout()).isEqualTo("still fine\n");
    service.closeSession("m1");
    assertThat(service.createSession("m4", null).state()).isEqualTo(SessionState.IDLE);
  }

  @Test
  void concurrentCreatesOfOneId_makeOneSession() throws Exception {
    List<CompletableFuture<SessionInfo>> creates = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      creates.add(
          CompletableFuture.supplyAsync(() -> service.createSession("same", null), threads));
    }
    for (var c : creates) {
      assertThat(c.get(30, TimeUnit.SECONDS).sessionId()).isEqualTo("same");
    }
    assertThat(service.listSessions()).hasSize(1);
  }

  @Test
  void idleSessions_expireAfterTheirTtl_butBusyOnesWait() throws Exception {
    service.createSession("short", 5);
    service.createSession("long", null);
    run("short", "print(1)");
    clock.advance(Duration.ofMinutes(6));
    assertThat(service.expireIdleSessions()).containsExactly(new SessionKey("local", "short"));
    CompletableFuture<RunRecord> busy =
        CompletableFuture.supplyAsync(() -> run("long", "import time\ntime.sleep(2)"), threads);
    awaitState("long", "busy");
    clock.advance(Duration.ofMinutes(31));
    assertThat(service.expireIdleSessions()).as("a busy session is not expired").isEmpty();
    busy.get(10, TimeUnit.SECONDS);
    clock.advance(Duration.ofMinutes(31));
    assertThat(service.expireIdleSessions()).containsExactly(new SessionKey("local", "long"));
    assertThat(service.listSessions()).isEmpty();
  }

  @Test
  void clearContext_forgetsVariablesAndImports() {
    run("c", "import json\nx = 5");
    service.clearContext("c");
    assertThat(run("c", "print(x)").error().name()).isEqualTo("NameError");
    assertThat(run("c", "json").error().name()).isEqualTo("NameError");
  }

  @Test
  void concurrentRunsInDifferentSessions_getOnlyTheirOwnOutput() throws Exception {
    List<CompletableFuture<RunRecord>> all = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      String me = "par" + i;
      all.add(
          CompletableFuture.supplyAsync(
              () ->
                  run(
                      me,
                      "import time\nfor k in range(20):\n    print('"
                          + me
                          + "', k, flush=True)\n    time.sleep(0.01)"),
              threads));
    }
    for (int i = 0; i < 4; i++) {
      RunRecord r = all.get(i).get(30, TimeUnit.SECONDS);
      String prefix = "par" + i + " ";
      assertThat(r.stdout().lines()).hasSize(20).allSatisfy(l -> assertThat(l).startsWith(prefix));
    }
  }

  @Test
  void closeSession_killsItsSandbox_andRemovesItsWorkspace() throws Exception {
    run("gone", "open('f.txt', 'w').write('x')");
    Path ws =
        Files.list(new dev.pysandbox.config.DataLayout(dataDir).workspacesDir())
            .filter(p -> Files.exists(p.resolve("f.txt")))
            .findFirst()
            .orElseThrow();
    service.closeSession("gone");
    Await.until("workspace " + ws + " deleted", () -> Files.exists(ws), exists -> !exists);
    assertThatThrownBy(() -> service.closeSession("gone"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SESSION_CLOSED));
    assertThatThrownBy(() -> service.closeSession("never"))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND));
  }

  String state(String id) {
    return service.listSessions().stream()
        .filter(s -> s.sessionId().equals(id))
        .map(s -> s.state().wireName())
        .findFirst()
        .orElse("none");
  }

  /** Waits until the session is in that state (the last state seen is in the failure). */
  void awaitState(String id, String wanted) throws InterruptedException {
    Await.until("session " + id + " is " + wanted, () -> state(id), wanted::equals);
  }

  /** Waits until the session has a run in state running, and returns its id. */
  String runningRun(String session) throws InterruptedException {
    return Await.until(
            "session " + session + " has a running run",
            () ->
                service
                    .listRuns(new dev.pysandbox.api.RunQuery(1, 0, RunStatus.RUNNING, session))
                    .runs(),
            runs -> !runs.isEmpty())
        .get(0)
        .runId();
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.ManualTime;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.core.audit.SecurityEventLog;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
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

/**
 * Security events recorded by a real core with real sandboxes: runs stopped by a limit, sandboxes
 * that died during a run or while idle, and what is not an event (a cancel); per tenant, counted.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class SecurityEventsTest {
  @TempDir Path dataDir;
  ManualTime clock = ManualTime.wallOnly(Instant.parse("2026-11-25T10:00:00Z"));
  DefaultSandboxService service;
  ExecutorService threads = Executors.newCachedThreadPool();

  @BeforeEach
  void start() {
    service = Assembly.create(TestServices.config(dataDir, Map.of("cancel_grace", "1")), clock);
    service.startBackground();
    service.awaitStarted();
  }

  @AfterEach
  void stop() {
    threads.shutdownNow();
    service.close();
  }

  private static List<SecurityEvent> events(SandboxService s, String sessionId) {
    return s.listSecurityEvents(new SecurityEventQuery(null, null, sessionId, 100, null)).events();
  }

  private static List<SecurityEvent> ofRun(SandboxService s, String runId) {
    return events(s, null).stream().filter(e -> runId.equals(e.runId())).toList();
  }

  @Test
  void timeout_isOneLimitStoppedRunEvent_namingTheLimitAndTheRunsLimits() {
    long before = service.securityEventCounts().recorded().get("limit_stopped_run");
    RunRecord r = service.run(new ExecutionRequest("import time\ntime.sleep(30)", null, null, 1));
    assertThat(r.status()).isEqualTo(RunStatus.TIMED_OUT);

    // Listed at once: the run's caller was answered after the event was recorded.
    assertThat(ofRun(service, r.runId()))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo("limit_stopped_run");
              assertThat(e.eventId()).matches(SecurityEventQuery.CURSOR_REGEX);
              assertThat(e.sessionId()).isNull();
              assertThat(e.at()).isEqualTo("2026-11-25T10:00:00Z");
              assertThat(e.detail())
                  .containsEntry("limit", "timeout")
                  .containsEntry("status", "timed_out")
                  .containsEntry("message", r.message());
              assertThat(limits(e))
                  .containsEntry("timeout_seconds", 1)
                  .containsEntry("memory_limit_mb", 512);
            });
    assertThat(service.securityEventCounts().recorded().get("limit_stopped_run"))
        .isEqualTo(before + 1);
    assertThat(service.securityEventCounts().notStored()).isZero();

    // since counts back from the core's clock.
    assertThat(
            service.listSecurityEvents(new SecurityEventQuery("1h", null, null, 10, null)).events())
        .hasSize(1);
    clock.advance(Duration.ofHours(2));
    assertThat(
            service.listSecurityEvents(new SecurityEventQuery("1h", null, null, 10, null)).events())
        .isEmpty();
  }

  @Test
  void memoryHog_inALowMemorySession_isLimitStoppedRun_memoryLimit() {
    service.createSession("hog", null, new LimitRequest(128, null, null, null));
    RunRecord r = service.run(new ExecutionRequest("x = bytearray(10**9)", "hog", null, 30));
    assertThat(r.killReason()).as(r.message()).hasToString("memory_limit");

    assertThat(events(service, "hog"))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo("limit_stopped_run");
              assertThat(e.runId()).isEqualTo(r.runId());
              assertThat(e.detail()).containsEntry("limit", "memory_limit");
              assertThat(limits(e)).containsEntry("memory_limit_mb", 128);
            });
  }

  @Test
  void sandboxThatExitsDuringARun_isSandboxDied_withTheRunAndWhy() {
    service.createSession("crash", null, null);
    RunRecord r = service.run(new ExecutionRequest("import os\nos._exit(3)", "crash", null, null));
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);

    assertThat(events(service, "crash"))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo("sandbox_died");
              assertThat(e.runId()).isEqualTo(r.runId());
              assertThat((String) e.detail().get("reason")).startsWith("exited: during run");
              assertThat(e.detail()).containsEntry("exit_code", 3);
            });
  }

  @Test
  void sandboxKilledWhileTheSessionIsIdle_isSandboxDied_once_withoutARun() throws Exception {
    // A process of the session's own kills its Python worker once the run has ended: nothing of
    // the server's did it, and no run was going on.
    RunRecord r =
        service.run(
            new ExecutionRequest(
                "import os, signal, subprocess, sys\n"
                    + "subprocess.Popen([sys.executable, '-c', 'import os, time; time.sleep(0.5);"
                    + " os.kill(%d, 9)' % os.getpid()])",
                "victim", null, null));
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(ofRun(service, r.runId())).isEmpty();

    List<SecurityEvent> died =
        Await.until(
            "an event that session victim's sandbox died",
            () -> events(service, "victim"),
            l -> !l.isEmpty());
    assertThat(died)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo("sandbox_died");
              assertThat(e.runId()).isNull();
              assertThat((String) e.detail().get("reason"))
                  .startsWith("exited: its sandbox")
                  .endsWith("while the session was idle");
            });
    assertThatThrownBy(() -> service.run(new ExecutionRequest("1", "victim", null, null)))
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.SESSION_DEAD));
    assertThat(events(service, "victim")).as("told once").hasSize(1);
  }

  @Test
  void launcherKilledFromOutside_isSandboxDied_forTheRunInFlight_andForTheIdleSession()
      throws Exception {
    service.run(new ExecutionRequest("x = 1", "idle", null, null));
    service.run(new ExecutionRequest("x = 1", "busy", null, null));
    CompletableFuture<RunRecord> running =
        CompletableFuture.supplyAsync(
            () ->
                service.run(new ExecutionRequest("import time\ntime.sleep(60)", "busy", null, 90)),
            threads);
    String runId = awaitRunning("busy");
    List<Path> before = workspaces();
    List<Long> launchers =
        dev.pysandbox.backend.ProcessTable.withCommandLineContaining(dataDir + "/run/launcher-");
    assertThat(launchers).isNotEmpty(); // the launcher, and a helper of its own at times
    launchers.forEach(dev.pysandbox.backend.ProcessTable::killNow);
    RunRecord r = running.get(30, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(RunStatus.INTERRUPTED);

    assertThat(events(service, "busy"))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo("sandbox_died");
              assertThat(e.runId()).isEqualTo(runId);
              assertThat((String) e.detail().get("reason")).contains("launcher");
            });
    assertThat(
            Await.until(
                "an event that session idle's sandbox died",
                () -> events(service, "idle"),
                l -> !l.isEmpty()))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.kind()).isEqualTo("sandbox_died");
              assertThat(e.runId()).isNull();
              assertThat((String) e.detail().get("reason")).contains("while the session was idle");
            });
    // A new launcher releases what the killed one had mounted (the sessions' workspaces) as they
    // close, before the data directory is deleted.
    assertThat(service.run(ExecutionRequest.of("print(2)")).stdout()).isEqualTo("2\n");
    service.closeSession("idle");
    service.closeSession("busy");
    Await.until(
        "the workspaces of the killed launcher's sandboxes are released",
        () -> workspaces(),
        now -> now.stream().noneMatch(before::contains));
  }

  private List<Path> workspaces() {
    try (var dirs = java.nio.file.Files.list(dataDir.resolve("sandbox/workspaces"))) {
      return dirs.toList();
    } catch (java.io.IOException e) {
      return List.of();
    }
  }

  @Test
  void cancelledRuns_areNoEvent_evenWhenTheCancelKillsTheSandbox() throws Exception {
    CompletableFuture<RunRecord> sleeping =
        CompletableFuture.supplyAsync(
            () ->
                service.run(
                    new ExecutionRequest("import time\ntime.sleep(30)", "polite", null, null)),
            threads);
    assertThat(service.cancelRun(awaitRunning("polite")).status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(sleeping.get(20, TimeUnit.SECONDS).status()).isEqualTo(RunStatus.CANCELLED);

    service.run(
        new ExecutionRequest(
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)", "stubborn", null, null));
    CompletableFuture<RunRecord> looping =
        CompletableFuture.supplyAsync(
            () ->
                service.run(
                    new ExecutionRequest(
                        "import time\nopen('started', 'w').close()\nwhile True:\n"
                            + "    time.sleep(0.01)",
                        "stubborn",
                        null,
                        null)),
            threads);
    // Cancelled once the loop runs (a cancel before the code starts stops it at once).
    Await.until(
        "session stubborn's workspace holds the file 'started'",
        () -> service.listArtifacts(null, "stubborn").files().stream().map(f -> f.path()).toList(),
        paths -> paths.contains("started"));
    assertThat(service.cancelRun(awaitRunning("stubborn")).message()).contains("killed");
    assertThat(looping.get(20, TimeUnit.SECONDS).status()).isEqualTo(RunStatus.CANCELLED);

    assertThat(events(service, "polite")).isEmpty();
    assertThat(events(service, "stubborn")).isEmpty();
    assertThat(service.securityEventCounts().recorded().values()).containsOnly(0L);
  }

  @Test
  void aTenantsEvents_areInvisibleToAnother_andItsIdsAreNoCursorOfTheirs() {
    SandboxService alice = service.forTenant("alice");
    SandboxService bob = service.forTenant("bob");
    RunRecord r = alice.run(new ExecutionRequest("while True: pass", "shared-name", null, 1));
    assertThat(r.status()).isEqualTo(RunStatus.TIMED_OUT);
    List<SecurityEvent> alices = events(alice, null);
    assertThat(alices).singleElement().satisfies(e -> assertThat(e.runId()).isEqualTo(r.runId()));

    assertThat(events(bob, null)).isEmpty();
    assertThat(events(bob, "shared-name")).isEmpty();
    assertThat(events(service, null)).as("the tenant local").isEmpty();
    String theirs = alices.get(0).eventId();
    String nobodys = "evt_0000000000000000";
    String theirMessage = cursorRefusal(bob, theirs).replace(theirs, "ID");
    assertThat(theirMessage).isEqualTo(cursorRefusal(bob, nobodys).replace(nobodys, "ID"));
    assertThat(service.securityEventCounts().recorded().get("limit_stopped_run"))
        .as("the server's count is every tenant's")
        .isEqualTo(1);
    assertThat(alice.securityEventCounts().recorded()).as("a tenant's view counts none").isEmpty();
  }

  @Test
  void paging_givesANextCursorOnlyWhileOlderEventsRemain() {
    SecurityEventLog log = service.core().securityEvents;
    for (int i = 0; i < 5; i++) {
      log.record("local", SecurityEvent.Kind.SANDBOX_DIED, "s" + i, null, Map.of("reason", "t"));
      clock.advance(Duration.ofMillis(1));
    }
    var first = service.listSecurityEvents(new SecurityEventQuery(null, null, null, 2, null));
    assertThat(first.events()).extracting(SecurityEvent::sessionId).containsExactly("s4", "s3");
    var second = service.listSecurityEvents(query(first));
    assertThat(second.events()).extracting(SecurityEvent::sessionId).containsExactly("s2", "s1");
    var last = service.listSecurityEvents(query(second));
    assertThat(last.events()).extracting(SecurityEvent::sessionId).containsExactly("s0");
    assertThat(last.nextCursor()).isNull();
    assertThat(
            service
                .listSecurityEvents(new SecurityEventQuery(null, null, null, 5, null))
                .nextCursor())
        .as("a full page with nothing older")
        .isNull();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> limits(SecurityEvent e) {
    return (Map<String, Object>) e.detail().get("limits");
  }

  private static SecurityEventQuery query(dev.pysandbox.api.SecurityEventList page) {
    assertThat(page.nextCursor()).isNotNull();
    return new SecurityEventQuery(null, null, null, 2, page.nextCursor());
  }

  private static String cursorRefusal(SandboxService s, String cursor) {
    try {
      s.listSecurityEvents(new SecurityEventQuery(null, null, null, 10, cursor));
    } catch (PysandboxException e) {
      assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
      return e.getMessage();
    }
    throw new AssertionError("cursor " + cursor + " was taken");
  }

  private String awaitRunning(String session) throws InterruptedException {
    return Await.until(
            "a run of session " + session + " is running",
            () ->
                service
                    .listRuns(new dev.pysandbox.api.RunQuery(10, 0, RunStatus.RUNNING, session))
                    .runs(),
            runs -> !runs.isEmpty())
        .get(0)
        .runId();
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.ManualTime;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.app.Assembly;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Timeouts and grace periods run on the core's time source: a test moves the time past a ten-minute
 * timeout or a half-minute grace period, and the core acts at its next look, in real seconds,
 * without the test sleeping them out.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Sandboxed
class MovedTimeTest {
  @TempDir Path dataDir;
  final ManualTime time = ManualTime.frozen(Instant.parse("2026-11-23T12:00:00Z"));
  DefaultSandboxService service;
  final ExecutorService threads = Executors.newCachedThreadPool();

  @BeforeEach
  void start() {
    service =
        Assembly.create(
            TestServices.config(dataDir, Map.of("pool_size", "1", "cancel_grace", "30")), time);
    service.startBackground();
    service.awaitStarted();
  }

  @AfterEach
  void stop() {
    threads.shutdownNow();
    service.close();
  }

  /** The thread that runs {@link #runLater}'s run, and so watches its deadline. */
  private final AtomicReference<Thread> runner = new AtomicReference<>();

  private CompletableFuture<RunRecord> runLater(String session, String code, int timeout) {
    return CompletableFuture.supplyAsync(
        () -> {
          runner.set(Thread.currentThread());
          return service.run(new ExecutionRequest(code, session, null, timeout));
        },
        threads);
  }

  /** Waits (in real time) until the code has really started: it writes 'started' first. */
  private void awaitStarted(String session) throws InterruptedException {
    Await.until(
        "session " + session + "'s workspace holds the file 'started'",
        () -> service.listArtifacts(null, session).files().stream().map(f -> f.path()).toList(),
        paths -> paths.contains("started"));
  }

  @Test
  void aTenMinuteTimeout_passesWhenTimeIsMoved_notAfterTenMinutes() throws Exception {
    service.createSession("slow", null);
    CompletableFuture<RunRecord> sleeping =
        runLater("slow", "import time\nopen('started', 'w').close()\ntime.sleep(3600)", 600);
    awaitStarted("slow");
    time.advance(Duration.ofSeconds(599));
    // Looks of the watch at the moved time (a look reads the time up to three times; six reads
    // hold a whole look): 599 s of the source are not yet the limit.
    long reads = time.readsBy(runner.get());
    Await.until(
        "a look of the watch at the moved time",
        () -> time.readsBy(runner.get()),
        n -> n >= reads + 6);
    assertThat(sleeping).as("599 s into a 600 s limit").isNotDone();
    time.advance(Duration.ofSeconds(2));
    // Within 20 real seconds of a 600 s limit: the moved time, not real time, ended it.
    RunRecord r = sleeping.get(20, TimeUnit.SECONDS);
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.TIMED_OUT);
    assertThat(r.killReason()).isEqualTo(KillReason.TIMEOUT);
    assertThat(r.durationMs()).as("the duration is the source's").isGreaterThanOrEqualTo(600_000);
    assertThat(r.message()).contains("limit 600 s");
    assertThat(Instant.parse(r.finishedAt()))
        .as("finished at the source's instant")
        .isAfterOrEqualTo(Instant.parse("2026-11-23T12:10:00Z"));
  }

  @Test
  void theCancelGracePeriod_endsWhenTimeIsMoved_andTheStubbornCodeIsKilled() throws Exception {
    service.createSession("stubborn", null);
    service.run(
        new ExecutionRequest(
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)", "stubborn", null, 30));
    CompletableFuture<RunRecord> looping =
        runLater(
            "stubborn",
            "import time\nopen('started', 'w').close()\nwhile True:\n    time.sleep(0.01)",
            3600);
    awaitStarted("stubborn");
    String runId =
        service.listRuns(new RunQuery(1, 0, RunStatus.RUNNING, "stubborn")).runs().get(0).runId();
    var cancel = CompletableFuture.supplyAsync(() -> service.cancelRun(runId), threads);
    // One second of the source per look: the 30 s grace period passes after about 30 looks.
    Await.until(
        "cancel_run returned, the time moved a second per look",
        () -> {
          time.advance(Duration.ofSeconds(1));
          return cancel.isDone();
        },
        done -> done);
    assertThat(cancel.get().status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(cancel.get().message()).contains("killed");
    assertThat(looping.get(20, TimeUnit.SECONDS).status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(service.listSessions())
        .filteredOn(s -> s.sessionId().equals("stubborn"))
        .singleElement()
        .satisfies(s -> assertThat(s.state()).isEqualTo(SessionState.DEAD));
  }
}

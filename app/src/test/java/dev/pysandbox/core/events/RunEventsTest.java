package dev.pysandbox.core.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.EventSink;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.Subscription;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.core.DefaultSandboxService;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run's events as they happen, in real sandboxes: order and timing, resuming after an event,
 * replay of a finished run, a slow subscriber against a flooding run, and another tenant's run.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class RunEventsTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;

  @BeforeAll
  static void start() {
    service = TestServices.start(dataDir, Map.of("output_limit", "65536", "output_max_mb", "512"));
  }

  @AfterAll
  static void stop() {
    service.close();
  }

  /** Takes a subscription's events on a test thread, noting when each came. */
  static final class Taker implements EventSink {
    final List<RunEvent> events = new CopyOnWriteArrayList<>();
    final List<Long> at = new CopyOnWriteArrayList<>();
    final Semaphore told = new Semaphore(0);
    volatile Subscription subscription;

    @Override
    public void available() {
      told.release();
    }

    /** Takes every event until done, waiting on the sink between polls. */
    List<RunEvent> takeAll(int batch, long pauseMillis) throws InterruptedException {
      while (!subscription.finished()) {
        List<RunEvent> got = subscription.poll(batch);
        long now = System.nanoTime();
        for (RunEvent e : got) {
          events.add(e);
          at.add(now);
        }
        if (got.isEmpty()) {
          told.tryAcquire(200, TimeUnit.MILLISECONDS);
        } else if (pauseMillis > 0) {
          Thread.sleep(pauseMillis);
        }
      }
      return events;
    }

    static Taker attach(SandboxService s, String runId, long after) {
      Taker t = new Taker();
      t.subscription = s.attach(runId, after, t);
      return t;
    }
  }

  static String types(List<RunEvent> events) {
    return events.stream().map(RunEvent::type).collect(Collectors.joining(","));
  }

  static String text(List<RunEvent> events) {
    StringBuilder b = new StringBuilder();
    for (RunEvent e : events) {
      if (e instanceof RunEvent.Stdout o) {
        b.append(o.text());
      }
    }
    return b.toString();
  }

  @Test
  void attach_printSleepPrint_holdsAAtLeast800msBeforeB_andEndsWithDone() throws Exception {
    RunRecord begun =
        service.start(
            ExecutionRequest.of(
                "import time\nprint('a', flush=True)\ntime.sleep(1)\nprint('b')\n7"),
            RunListener.NONE);
    assertThat(begun.status()).isEqualTo(RunStatus.RUNNING);
    Taker t = Taker.attach(service, begun.runId(), 0);
    List<RunEvent> events = t.takeAll(100, 0);

    assertThat(types(events)).isEqualTo("started,stdout,stdout,result,done");
    assertThat(events).extracting(RunEvent::seq).containsExactly(1L, 2L, 3L, 4L, 5L);
    assertThat(((RunEvent.Started) events.get(0)).runId()).isEqualTo(begun.runId());
    assertThat(((RunEvent.Stdout) events.get(1)).text()).isEqualTo("a\n");
    assertThat(((RunEvent.Stdout) events.get(2)).text()).isEqualTo("b\n");
    assertThat(((RunEvent.Result) events.get(3)).data()).containsEntry("text/plain", "7");
    long heldMillis = TimeUnit.NANOSECONDS.toMillis(t.at.get(2) - t.at.get(1));
    assertThat(heldMillis).as("'a' is held before 'b' comes").isGreaterThanOrEqualTo(800);
    RunRecord done = ((RunEvent.Done) events.get(4)).run();
    assertThat(done.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(done.stdout()).isEqualTo("a\nb\n");
    assertThat(done.code()).as("done carries the record without its code").isNull();
    assertThat(service.getRun(begun.runId(), false).status()).isEqualTo(RunStatus.SUCCEEDED);
  }

  @Test
  void runListener_getsEveryEventInOrder_offTheCallersThread() throws Exception {
    List<RunEvent> events = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<Void> done = new CompletableFuture<>();
    RunRecord r =
        service.run(
            ExecutionRequest.of(
                // stdout and stderr are two sockets: their order is only the order they are read
                "import sys, time\nprint('out')\ntime.sleep(0.2)\nprint('err', file=sys.stderr)\n1/0"),
            new RunListener() {
              @Override
              public void started(String runId) {}

              @Override
              public boolean wantsEvents() {
                return true;
              }

              @Override
              public void event(RunEvent e) {
                events.add(e);
                if (e.isDone()) {
                  done.complete(null);
                }
              }
            });
    done.get(10, TimeUnit.SECONDS);
    assertThat(types(events)).isEqualTo("started,stdout,stderr,error,done");
    RunEvent.Failed error = (RunEvent.Failed) events.get(3);
    assertThat(error.name()).isEqualTo("ZeroDivisionError");
    assertThat(error.traceback()).contains("1/0");
    assertThat(((RunEvent.Done) events.get(4)).run().runId()).isEqualTo(r.runId());
    assertThat(events.get(4).toWire())
        .containsEntry("type", "done")
        .containsEntry("seq", 5L)
        .containsEntry("run_id", r.runId())
        .containsEntry("status", "failed");
  }

  @Test
  void attach_afterAnEvent_resumesAfterIt_andAFinishedRunIsReplayed() throws Exception {
    RunRecord begun =
        service.start(
            ExecutionRequest.of(
                "import time\nfor i in range(5):\n    print(i, flush=True)\n    time.sleep(0.2)"),
            RunListener.NONE);
    Taker first = Taker.attach(service, begun.runId(), 0);
    Await.until(
        "two lines told",
        () -> first.subscription.poll(1),
        e -> !e.isEmpty() && e.get(0).seq() >= 3);
    first.subscription.close();

    Taker resumed = Taker.attach(service, begun.runId(), 3);
    List<RunEvent> rest = resumed.takeAll(100, 0);
    assertThat(rest.get(0).seq()).isEqualTo(4);
    assertThat(text(rest)).isEqualTo("2\n3\n4\n");
    assertThat(rest.get(rest.size() - 1).isDone()).isTrue();

    // Ended: still served from the kept log, numbered as before.
    Taker again = Taker.attach(service, begun.runId(), 0);
    List<RunEvent> all = again.takeAll(100, 0);
    assertThat(text(all)).isEqualTo("0\n1\n2\n3\n4\n");
    assertThat(all.get(all.size() - 1).seq()).isEqualTo(rest.get(rest.size() - 1).seq());

    // Forgotten by the live runs: replayed from the record.
    service.core().live.drop(service.core().live.log(begun.runId()));
    Taker replayed = Taker.attach(service, begun.runId(), 0);
    assertThat(types(replayed.takeAll(100, 0))).isEqualTo("started,stdout,done");
    assertThat(text(replayed.events)).isEqualTo("0\n1\n2\n3\n4\n");
    Taker replayResumed = Taker.attach(service, begun.runId(), 2);
    assertThat(types(replayResumed.takeAll(100, 0))).isEqualTo("done");
  }

  @Test
  void slowSubscriber_againstAFloodingRun_isToldItLagged_whileMemoryStaysBounded()
      throws Exception {
    long total = 200L * 1024 * 1024;
    RunRecord begun =
        service.start(
            ExecutionRequest.of(
                "import sys\nchunk = 'y' * 65535 + '\\n'\nfor _ in range("
                    + total / 65536
                    + "):\n    sys.stdout.write(chunk)\nsys.stdout.flush()"),
            RunListener.NONE);
    Taker slow = Taker.attach(service, begun.runId(), 0);
    RunEventLog log = service.core().live.log(begun.runId());
    long[] most = {0};
    Thread watch =
        new Thread(
            () -> {
              while (!log.ended()) {
                most[0] = Math.max(most[0], log.bufferedBytes());
                dev.pysandbox.util.Pause.millis(1);
              }
            });
    watch.start();
    List<RunEvent> events = slow.takeAll(4, 50);
    watch.join();

    List<RunEvent.Lagged> lagged =
        events.stream()
            .filter(e -> e instanceof RunEvent.Lagged)
            .map(e -> (RunEvent.Lagged) e)
            .toList();
    assertThat(lagged).as("the slow subscriber was told it fell behind").isNotEmpty();
    long seen = events.stream().filter(e -> e instanceof RunEvent.Stdout).count();
    long skipped = lagged.stream().mapToLong(RunEvent.Lagged::skippedBytes).sum();
    assertThat(skipped).isGreaterThan(total / 2);
    assertThat(most[0])
        .as("the run's buffer never held more than its capacity and one read")
        .isLessThanOrEqualTo(LiveRuns.BUFFER_BYTES + 64 * 1024 + RunEventLog.EVENT_OVERHEAD_BYTES);
    RunRecord done = ((RunEvent.Done) events.get(events.size() - 1)).run();
    assertThat(done.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(done.stdoutBytes()).isEqualTo(total);
    assertThat(done.stdoutTruncated()).isTrue();
    assertThat(done.stdout()).startsWith("yyyy").contains("bytes omitted");
    assertThat(service.getRun(begun.runId(), false).stdoutBytes()).isEqualTo(total);
    assertThat(seen).isPositive();
  }

  @Test
  void attach_toAnotherTenantsRun_isNotFound_asForARunThatDoesNotExist() {
    RunRecord alices = service.forTenant("alice").run(ExecutionRequest.of("print(1)"));
    SandboxService bob = service.forTenant("bob");
    String missing = "run_00000000000000000000";
    PysandboxException foreign =
        (PysandboxException)
            org.assertj.core.api.Assertions.catchThrowable(
                () -> bob.attach(alices.runId(), 0, () -> {}));
    PysandboxException unknown =
        (PysandboxException)
            org.assertj.core.api.Assertions.catchThrowable(() -> bob.attach(missing, 0, () -> {}));
    assertThat(foreign.code()).isEqualTo(ErrorCode.NOT_FOUND);
    assertThat(foreign.getMessage())
        .isEqualTo(unknown.getMessage().replace(missing, alices.runId()));
    assertThatThrownBy(() -> service.attach(alices.runId(), -1, () -> {}))
        .isInstanceOf(PysandboxException.class);
  }

  @Test
  void getRun_withWaitSeconds_waitsForTheEnd_andAnswersARunningRunAsItStands() throws Exception {
    RunRecord begun =
        service.start(ExecutionRequest.of("import time\ntime.sleep(1.5)\n42"), RunListener.NONE);
    RunRecord still = service.getRun(begun.runId(), false, 0);
    assertThat(still.status()).isEqualTo(RunStatus.RUNNING);
    // The same call with a wait answers only once the run has ended.
    RunRecord waited = service.getRun(begun.runId(), false, 10);
    assertThat(waited.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(waited.result()).containsEntry("text/plain", "42");
    assertThatThrownBy(() -> service.getRun(begun.runId(), false, 61))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("wait_seconds must be between 0 and 60");
  }

  @Test
  void start_inASession_holdsItsLock_soASecondCallIsBusy_andCancelStopsIt() throws Exception {
    RunRecord begun =
        service.start(
            new ExecutionRequest("import time\ntime.sleep(30)", "live-busy", null, null),
            RunListener.NONE);
    assertThat(begun.sessionId()).isEqualTo("live-busy");
    assertThatThrownBy(() -> service.run(new ExecutionRequest("1", "live-busy", null, null)))
        .isInstanceOf(PysandboxException.class)
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.SESSION_BUSY));
    assertThatThrownBy(
            () ->
                service.start(new ExecutionRequest("1", "live-busy", null, null), RunListener.NONE))
        .isInstanceOf(PysandboxException.class)
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.SESSION_BUSY));
    assertThat(service.cancelRun(begun.runId()).status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(service.getRun(begun.runId(), false, 5).status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(service.run(new ExecutionRequest("2", "live-busy", null, null)).status())
        .isEqualTo(RunStatus.SUCCEEDED);
    service.closeSession("live-busy");
  }

  @Test
  void startedRuns_whenTheServerDrainsAndCloses_endCancelledAndInterruptedLikeAnyRun(
      @TempDir Path own) throws Exception {
    DefaultSandboxService s = TestServices.start(own, Map.of());
    try {
      RunRecord a = s.start(ExecutionRequest.of("import time\ntime.sleep(60)"), RunListener.NONE);
      Taker watching = Taker.attach(s, a.runId(), 0);
      assertThat(s.drain(0, "the test stops the server")).containsExactly(a.runId());
      // The drain waits 5 s for the cancelled run to end; on a loaded machine its sandbox may
      // still be starting then, and the run ends cancelled a little later: wait for that end.
      RunRecord cancelled = s.getRun(a.runId(), false, 60);
      assertThat(cancelled.status()).isEqualTo(RunStatus.CANCELLED);
      assertThat(cancelled.message()).contains("the test stops the server");
      List<RunEvent> seen = watching.takeAll(10, 0);
      assertThat(((RunEvent.Done) seen.get(seen.size() - 1)).run().status())
          .isEqualTo(RunStatus.CANCELLED);
    } finally {
      s.close();
    }
    DefaultSandboxService again = TestServices.start(own, Map.of());
    RunRecord b;
    try {
      b = again.start(ExecutionRequest.of("import time\ntime.sleep(60)"), RunListener.NONE);
    } finally {
      again.close("closed by the test");
    }
    DefaultSandboxService reader = Assembly.openReadOnly(TestServices.config(own, Map.of()));
    try {
      assertThat(reader.getRun(b.runId(), false).status()).isEqualTo(RunStatus.INTERRUPTED);
    } finally {
      reader.close();
    }
  }

  @Test
  void endedLogs_areKeptAMinute_andAtMostTheirCount() {
    long[] now = {0};
    var timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    try {
      LiveRuns live =
          new LiveRuns(
              timer,
              Runnable::run,
              () -> now[0],
              id -> java.util.Optional.empty(),
              id -> java.nio.file.Path.of("/nonexistent", id, EventSpill.FILE),
              false);
      RunRecord end = RunRecord.builder().runId("run_a").status(RunStatus.SUCCEEDED).build();
      live.ended(live.open("run_a", "local", null), end);
      now[0] = TimeUnit.SECONDS.toNanos(59);
      live.expire();
      assertThat(live.log("run_a")).as("kept for a client that comes back").isNotNull();
      now[0] = TimeUnit.SECONDS.toNanos(61);
      live.expire();
      assertThat(live.log("run_a")).isNull();
      for (int i = 0; i < LiveRuns.RETAIN_MAX + 10; i++) {
        live.ended(live.open("run_" + i, "local", null), end);
      }
      assertThat(live.held()).isEqualTo(LiveRuns.RETAIN_MAX);
      assertThat(live.log("run_0")).as("the oldest go first").isNull();
    } finally {
      timer.shutdownNow();
    }
  }

  @Test
  void utf8_splitBetweenReads_isDecodedWhole() {
    RunEventLog.Utf8Chunks d = new RunEventLog.Utf8Chunks();
    byte[] euro = "€".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(d.decode(java.nio.ByteBuffer.wrap(new byte[] {'a', euro[0]}))).isEqualTo("a");
    assertThat(d.decode(java.nio.ByteBuffer.wrap(new byte[] {euro[1]}))).isEmpty();
    assertThat(d.decode(java.nio.ByteBuffer.wrap(new byte[] {euro[2], 'b'}))).isEqualTo("€b");
    assertThat(d.flush()).isEmpty();
  }
}

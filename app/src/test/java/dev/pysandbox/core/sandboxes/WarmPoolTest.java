package dev.pysandbox.core.sandboxes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.backend.bwrap.BwrapBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.util.TimeSource;
import dev.pysandbox.worker.WorkerHub;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The warm pool when starts fail: it backs off, reports why, fails fast and recovers. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class WarmPoolTest {
  @TempDir Path dataDir;

  ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  ExecutorService executor = Executors.newCachedThreadPool();
  WorkerHub hub;
  BwrapBackend real;

  @AfterEach
  void stop() {
    timer.shutdownNow();
    if (real != null) {
      real.close();
      hub.close();
    }
    executor.shutdownNow();
  }

  /**
   * The seam: fails every start at once (an already-failed future, as a host that cannot create a
   * workspace gives) while {@code failing}, else starts a real sandbox.
   */
  final class FlakyBackend implements SandboxBackend {
    final AtomicInteger starts = new AtomicInteger();
    volatile boolean failing = true;

    @Override
    public String name() {
      return "flaky";
    }

    @Override
    public Optional<String> unavailableReason() {
      return Optional.empty();
    }

    @Override
    public CompletableFuture<Sandbox> start(SandboxSpec spec) {
      starts.incrementAndGet();
      if (failing) {
        return CompletableFuture.failedFuture(
            new PysandboxException(
                ErrorCode.BACKEND_UNAVAILABLE,
                "bwrap: cannot start sandbox: workspaces read-only"));
      }
      return realBackend().start(spec);
    }

    @Override
    public Optional<dev.pysandbox.backend.InterpreterInfo> interpreter() {
      return Optional.empty();
    }

    @Override
    public int reapOrphans(java.util.function.Predicate<String> instanceAlive) {
      return 0;
    }

    @Override
    public void close() {}
  }

  BwrapBackend realBackend() {
    synchronized (this) {
      if (real == null) {
        try {
          PysandboxConfig config = TestServices.config(dataDir, Map.of());
          DataLayout layout = new DataLayout(dataDir);
          hub = WorkerHub.open(layout.runtimeDir().resolve("pool-test.sock"));
          real = new BwrapBackend(config, layout, hub, "0badc0de", executor);
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
        assertThat(real.unavailableReason()).isEmpty();
      }
      return real;
    }
  }

  WarmPool pool(SandboxBackend backend) {
    Limits limits = TestServices.config(dataDir, Map.of()).defaultLimits();
    return new WarmPool(
        backend,
        new SandboxSpec(List.of(), 1 << 20, limits, 64L << 20),
        2,
        10,
        timer,
        TimeSource.system(),
        dev.pysandbox.api.MetricsRecorder.NONE);
  }

  /** Regression: a start failing at once made refill() loop 200k times a second under the lock. */
  @Test
  void refill_whenStartsFailAtOnce_backsOffInsteadOfSpinning_andTakeFailsFast() throws Exception {
    FlakyBackend backend = new FlakyBackend();
    WarmPool pool = pool(backend);
    Thread filler = new Thread(pool::refill);
    filler.setDaemon(true);
    filler.start();
    filler.join(1000);
    assertThat(filler.isAlive()).as("refill() returns").isFalse();
    // 0, 0.25, 0.75, 1.75 s, then 3.75 s: four attempts; a pool that spun would have made
    // thousands by the time the fourth is seen.
    Await.until("four sandbox starts", backend.starts::get, n -> n >= 4);
    assertThat(backend.starts.get()).as("starts when the fourth was seen").isBetween(4, 10);

    // Fails at once, with the last failure: it does not wait for a start that cannot come.
    assertThatThrownBy(pool::take)
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.BACKEND_UNAVAILABLE))
        .hasMessageContaining("workspaces read-only")
        .hasMessageContaining("sandbox starts failed")
        .hasCauseInstanceOf(PysandboxException.class);
    assertThat(pool.lastFailure())
        .hasValueSatisfying(
            f -> {
              assertThat(f.message()).contains("workspaces read-only");
              assertThat(f.consecutive()).isEqualTo(backend.starts.get());
              assertThat(f.retryAt()).isAfter(f.at());
              assertThat(f.describe(f.at()))
                  .startsWith("warm pool: the last " + f.consecutive() + " sandbox starts failed")
                  .contains("retrying in");
            });
    pool.close();
  }

  @Test
  void afterFailures_whenStartsWorkAgain_refillNowRecoversAtOnce_andForgetsTheFailure()
      throws Exception {
    FlakyBackend backend = new FlakyBackend();
    realBackend();
    WarmPool pool = pool(backend);
    pool.refill();
    Await.until(
        "four failed starts (backed off to 2 s by then)",
        () -> pool.lastFailure().map(f -> f.consecutive()).orElse(0),
        n -> n >= 4);
    backend.failing = false;
    pool.refillNow();
    Await.until("two sandboxes ready", pool::readyCount, n -> n == 2);
    assertThat(pool.lastFailure()).isEmpty();
    Sandbox s = pool.take();
    try {
      assertThat(s.worker().isOpen()).isTrue();
    } finally {
      s.kill("test over").get(10, TimeUnit.SECONDS);
      pool.close();
    }
  }

  /**
   * Regression: a data directory where no workspace can be created made the pool start 200k
   * sandboxes a second and hang every run on the pool's lock.
   */
  @Test
  void service_whenWorkspacesCannotBeCreated_reportsThePoolFailure_failsFast_andRecovers()
      throws Exception {
    DefaultSandboxService service =
        Assembly.create(TestServices.config(dataDir, Map.of("pool_size", "2")), Clock.systemUTC());
    try {
      assertThat(service.checkSetup().ready()).isTrue(); // sets the backend up
      Path workspaces = new DataLayout(dataDir).workspacesDir();
      Files.delete(workspaces);
      Files.writeString(workspaces, "not a directory");
      service.startBackground();
      service.awaitStarted(); // hung here, and in close(), before the fix

      SetupReport report = service.checkSetup();
      assertThat(report.problems())
          .anySatisfy(
              p ->
                  assertThat(p)
                      .startsWith("warm pool: the last ")
                      .contains("sandbox start")
                      .contains("Not a directory")
                      .contains("retrying in"));
      assertThat(report.pool()).containsKey("last_failure");
      // Fails at once with the pool's failure, instead of hanging on the pool's lock.
      assertThatThrownBy(() -> service.run(ExecutionRequest.of("print(1)")))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.BACKEND_UNAVAILABLE))
          .hasMessageContaining("Not a directory");

      Files.delete(workspaces);
      Files.createDirectory(workspaces);
      waitForReady(service, 2);
      report = service.checkSetup();
      assertThat(report.pool()).containsEntry("ready", 2).doesNotContainKey("last_failure");
      assertThat(report.problems()).noneMatch(p -> p.startsWith("warm pool"));
      assertThat(service.run(ExecutionRequest.of("print(6*7)")).stdout()).isEqualTo("42\n");
    } finally {
      service.close();
    }
  }

  @Test
  void service_whenTheLauncherDies_refillsThePoolAtOnce() throws Exception {
    DefaultSandboxService service = TestServices.start(dataDir, Map.of("pool_size", "2"));
    try {
      waitForReady(service, 2);
      ProcessHandle launcher =
          ProcessHandle.current()
              .children()
              .filter(p -> p.info().commandLine().orElse("").contains("launcher"))
              .findFirst()
              .orElseThrow();
      launcher.destroyForcibly();
      launcher.onExit().get(10, TimeUnit.SECONDS);
      // Its sandboxes die with it; the pool starts new ones without waiting for a run to ask. The
      // next launcher starts once the server has seen them go (until then the pool may still
      // count the dead ones as ready).
      Await.until(
          "a new launcher process",
          () ->
              ProcessHandle.current()
                  .children()
                  .anyMatch(
                      p ->
                          p.pid() != launcher.pid()
                              && p.info().commandLine().orElse("").contains("launcher")),
          started -> started);
      waitForReady(service, 2);
      assertThat(service.checkSetup().pool()).containsEntry("ready", 2);
      assertThat(service.run(ExecutionRequest.of("print(6*7)")).stdout()).isEqualTo("42\n");
    } finally {
      service.close();
    }
  }

  static void waitForReady(DefaultSandboxService service, int n) throws InterruptedException {
    Await.until(
        n + " sandboxes ready in the pool",
        Duration.ofSeconds(20),
        () -> service.checkSetup().pool().get("ready"),
        ready -> Integer.valueOf(n).equals(ready));
  }
}

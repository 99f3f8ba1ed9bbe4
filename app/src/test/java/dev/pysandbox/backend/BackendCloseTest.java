package dev.pysandbox.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.Fast;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Limits;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.worker.Worker;
import dev.pysandbox.worker.WorkerConnection;
import dev.pysandbox.worker.WorkerHub;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backend's close against the launches under way, on a backend whose launch blocks where a
 * container engine's create would: the close must see the sandbox that launch makes, and kill it,
 * or it outlives the server (CI found a container left behind a closed server).
 */
@Fast
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BackendCloseTest {
  @TempDir Path dataDir;

  private final ExecutorService blocking = Executors.newCachedThreadPool();
  private WorkerHub hub;

  @AfterEach
  void shut() {
    blocking.shutdownNow();
    if (hub != null) {
      hub.close();
    }
  }

  @Test
  void close_waitsForALaunchUnderWay_andKillsWhatItMade() throws Exception {
    HeldBackend backend = backend();
    CompletableFuture<Sandbox> starting = backend.start(spec());
    assertThat(backend.creating.await(15, TimeUnit.SECONDS)).as("the launch began").isTrue();
    Thread closer = new Thread(backend::close, "closer");
    closer.start();
    Await.until(
        "the close waits for the launch",
        closer::getState,
        s -> s == Thread.State.TIMED_WAITING || s == Thread.State.WAITING);
    assertThat(backend.made).as("nothing made yet").isEmpty();
    backend.release.countDown();
    closer.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(closer.isAlive()).as("the close returned").isFalse();
    assertThat(backend.made).hasSize(1);
    assertThat(backend.made.get(0).kills.get())
        .as("the close killed what the launch made")
        .isPositive();
    assertThat(backend.made.get(0).exited()).isDone();
    assertThat(starting)
        .as("the start does not hand out a killed sandbox")
        .failsWithin(30, TimeUnit.SECONDS);
  }

  @Test
  void aStartAfterClose_isRefused_withoutMakingAnything() throws Exception {
    HeldBackend backend = backend();
    backend.release.countDown();
    backend.close();
    assertThat(backend.start(spec())).failsWithin(Duration.ofSeconds(5));
    assertThat(backend.made).isEmpty();
    assertThat(backend.creating.getCount()).as("no launch began").isEqualTo(1);
  }

  @Test
  void close_doesNotWaitForever_forALaunchThatHangs() throws Exception {
    HeldBackend backend = backend();
    backend.start(spec());
    assertThat(backend.creating.await(15, TimeUnit.SECONDS)).isTrue();
    backend.close(); // returns after its bounded wait although the launch never ends
    assertThat(backend.made).isEmpty();
    backend.release.countDown();
  }

  private HeldBackend backend() throws Exception {
    PysandboxConfig config = TestServices.config(dataDir, Map.of("startup_timeout", "60"));
    DataLayout layout = new DataLayout(config.dataDir());
    Files.createDirectories(layout.workspacesDir());
    Files.createDirectories(layout.runtimeDir());
    hub = WorkerHub.open(layout.runtimeDir().resolve("close-test.sock"));
    HeldBackend b = new HeldBackend(config, layout, hub, blocking);
    assertThat(b.unavailableReason()).isEmpty();
    return b;
  }

  private SandboxSpec spec() {
    return new SandboxSpec(
        List.of(), 1 << 20, TestServices.config(dataDir, Map.of()).defaultLimits(), 64L << 20);
  }

  /** Launches in the background, blocking in create until {@link #release} opens. */
  private static final class HeldBackend extends AbstractSandboxBackend<BackendSetup, HeldSandbox> {
    final CountDownLatch creating = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final List<HeldSandbox> made = new java.util.concurrent.CopyOnWriteArrayList<>();

    HeldBackend(PysandboxConfig config, DataLayout layout, WorkerHub hub, ExecutorService e) {
      super(new BackendParts(config, layout, hub, "c105e000", e, false));
    }

    @Override
    public String name() {
      return "held";
    }

    @Override
    protected BackendSetup setUp() {
      return new BackendSetup() {
        @Override
        public InterpreterInfo python() {
          return null;
        }

        @Override
        public String users() {
          return "held";
        }
      };
    }

    @Override
    protected boolean launchesInBackground() {
      return true;
    }

    @Override
    protected Launch<HeldSandbox> begin(
        BackendSetup setup, String id, SandboxSpec spec, Path workspace) {
      return new Launch<>() {
        @Override
        public HostUser user() {
          return new HostUser("held", 1000, 1000);
        }

        @Override
        public boolean ownsWorkspaceDirectory() {
          return false;
        }

        @Override
        public HeldSandbox create(WorkerConnection worker, SandboxSpec.Egress.Door egress) {
          creating.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          HeldSandbox s = new HeldSandbox(id, workspace, worker);
          made.add(s);
          return s;
        }

        @Override
        public void undo() {}
      };
    }

    @Override
    public int reapOrphans(java.util.function.Predicate<String> instanceAlive) {
      return 0;
    }

    @Override
    public void close() {
      for (HeldSandbox s : stopLaunching(5_000)) {
        s.kill("server shutting down");
      }
    }
  }

  /** A sandbox with no process: a kill ends it and closes its worker. */
  private static final class HeldSandbox implements Sandbox {
    final java.util.concurrent.atomic.AtomicInteger kills =
        new java.util.concurrent.atomic.AtomicInteger();
    private final String id;
    private final Path workspace;
    private final WorkerConnection worker;
    private final CompletableFuture<SandboxExit> exited = new CompletableFuture<>();

    HeldSandbox(String id, Path workspace, WorkerConnection worker) {
      this.id = id;
      this.workspace = workspace;
      this.worker = worker;
    }

    @Override
    public String id() {
      return id;
    }

    @Override
    public Path workspace() {
      return workspace;
    }

    @Override
    public boolean diskQuotaEnforced() {
      return false;
    }

    @Override
    public void releaseWorkspace() {}

    @Override
    public HostUser hostUser() {
      return new HostUser("held", 1000, 1000);
    }

    @Override
    public Worker worker() {
      return worker;
    }

    @Override
    public CompletableFuture<KillReport> kill(String reason) {
      kills.incrementAndGet();
      worker.close(reason);
      exited.complete(new SandboxExit(null, 9, true));
      return CompletableFuture.completedFuture(new KillReport(0, 0));
    }

    @Override
    public CompletableFuture<SandboxExit> exited() {
      return exited;
    }

    @Override
    public Limits limits() {
      throw new UnsupportedOperationException();
    }

    @Override
    public Optional<ResourceUsage> usage() {
      return Optional.empty();
    }

    @Override
    public void resetPeak() {}
  }
}

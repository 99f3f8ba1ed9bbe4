package dev.pysandbox.core.runs;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.KillReport;
import dev.pysandbox.backend.ResourceUsage;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxExit;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.backend.bwrap.BwrapBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.core.audit.Provenance;
import dev.pysandbox.core.audit.SecurityEventLog;
import dev.pysandbox.core.events.EventSpill;
import dev.pysandbox.core.events.LiveRuns;
import dev.pysandbox.core.events.RunEventLog;
import dev.pysandbox.core.host.StoreHandle;
import dev.pysandbox.core.sandboxes.KillOutcome;
import dev.pysandbox.core.sandboxes.WarmPool;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.jdbc.JdbcRunStore;
import dev.pysandbox.util.TimeSource;
import dev.pysandbox.worker.Worker;
import dev.pysandbox.worker.WorkerHub;
import dev.pysandbox.worker.WorkerReply;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * No swallowed failures (issue 11.5): each is logged once with its cause and surfaces with its real
 * reason. Real bubblewrap, real Python, real SQLite; the only stub is a sandbox whose kill fails.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class SurfacedFailuresTest {
  @TempDir Path dataDir;

  final ExecutorService executor = Executors.newCachedThreadPool();
  final List<Runnable> cleanups = new java.util.ArrayList<>();
  WorkerHub hub;
  BwrapBackend backend;

  @AfterEach
  void stop() {
    cleanups.forEach(Runnable::run);
    if (backend != null) {
      backend.close();
      hub.close();
    }
    executor.shutdownNow();
  }

  Sandbox realSandbox() throws Exception {
    PysandboxConfig config = TestServices.config(dataDir, Map.of());
    DataLayout layout = new DataLayout(dataDir);
    if (backend == null) {
      hub = WorkerHub.open(layout.runtimeDir().resolve("failures-test.sock"));
      backend = new BwrapBackend(config, layout, hub, "0badf00d", executor);
      assertThat(backend.unavailableReason()).isEmpty();
    }
    Limits limits = config.defaultLimits();
    Sandbox s =
        backend
            .start(new SandboxSpec(List.of(), 1 << 20, limits, 64L << 20))
            .get(30, TimeUnit.SECONDS);
    cleanups.add(() -> s.kill("test over"));
    return s;
  }

  static ListAppender<ILoggingEvent> capture(Class<?> type) {
    Logger logger = (Logger) LoggerFactory.getLogger(type);
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    logger.addAppender(appender);
    return appender;
  }

  static List<ILoggingEvent> at(ListAppender<ILoggingEvent> log, Level level) {
    return log.list.stream().filter(e -> e.getLevel() == level).toList();
  }

  @Test
  void timeout_whenKillingTheSandboxFails_saysSo_insteadOfSayingItWasKilled() throws Exception {
    Sandbox real = realSandbox();
    Sandbox unkillable = new KillFails(real);
    ListAppender<ILoggingEvent> log = capture(KillOutcome.class);
    ActiveRun active =
        new ActiveRun(
            "run_kill_fails",
            "local",
            null,
            new RunEventLog("run_kill_fails", "local", null, LiveRuns.BUFFER_BYTES));
    active.attach(unkillable);
    RunRecord.Builder run = RunRecord.builder().runId("run_kill_fails");

    Execution.run(
        active,
        "import time\ntime.sleep(30)",
        1,
        new ExecutionWatch.Guard(64L << 20, 8L << 20, 0, 2000),
        TimeSource.system(),
        run);

    RunRecord r = run.build();
    assertThat(r.status()).isEqualTo(RunStatus.TIMED_OUT);
    assertThat(r.message())
        .contains("killing the sandbox failed: the launcher is gone")
        .doesNotContain("the sandbox was killed");
    assertThat(at(log, Level.WARN)).hasSize(1);
    assertThat(at(log, Level.WARN).get(0).getThrowableProxy().getMessage())
        .isEqualTo("the launcher is gone");
  }

  @Test
  void execution_whenTheServerFailsToSendTheRun_logsItOnce_andTheRunSaysWhy() throws Exception {
    Sandbox sandbox = realSandbox();
    sandbox.worker().close("closed by the test");
    ListAppender<ILoggingEvent> log = capture(RunExecutor.class);
    try (RunStore store = JdbcRunStore.openSqlite(new DataLayout(dataDir).database())) {
      LiveRuns live =
          new LiveRuns(
              java.util.concurrent.Executors.newSingleThreadScheduledExecutor(),
              executor,
              System::nanoTime,
              id -> store.get(id, false),
              id -> dataDir.resolve(id).resolve(EventSpill.FILE),
              false);
      RunExecutor runs =
          new RunExecutor(
              TimeSource.system(),
              "0badf00d",
              "bwrap",
              () -> store,
              executor,
              1,
              64L << 20,
              8L << 20,
              new InFlightRuns(TimeSource.system(), () -> store, 1, live, null),
              () -> Provenance.UNKNOWN,
              id -> {},
              new SecurityEventLog(() -> store, TimeSource.system(), executor, null, false));
      ExecutionRequest request = ExecutionRequest.of("print(1)");
      RunPlan plan =
          new RunPlan(
              dev.pysandbox.api.Ids.newRunId(),
              "local",
              null,
              request.code(),
              5,
              TestServices.config(dataDir, Map.of()).tiers().defaultTier(),
              null,
              null,
              List.of(),
              new RunPlan.Fresh(request, null, List.of()));
      RunExecutor.Begun begun = runs.begin(plan, null, null, RunListener.NONE);
      RunRecord r = runs.complete(begun, runs.execute(begun, sandbox, 0));

      assertThat(r.status()).isEqualTo(RunStatus.FAILED);
      assertThat(r.message())
          .startsWith("the sandbox could not take the run: ")
          .contains("closed by the test");
      assertThat(at(log, Level.ERROR)).hasSize(1);
      assertThat(at(log, Level.ERROR).get(0).getFormattedMessage()).contains(r.runId());
    }
  }

  @Test
  void runner_answersAnUnknownOperation_withAnError_insteadOfSilence() throws Exception {
    Sandbox sandbox = realSandbox();
    WorkerReply reply =
        sandbox
            .worker()
            .request("frobnicate", dev.pysandbox.api.Json.mapper().createObjectNode())
            .get(5, TimeUnit.SECONDS);
    assertThat(reply.frame().path("status").asText()).isEqualTo("error");
    assertThat(reply.frame().path("error").path("name").asText())
        .isEqualTo("pysandbox.UnknownOperation");
    assertThat(reply.frame().path("error").path("value").asText()).contains("frobnicate");
    assertThat(sandbox.worker().isOpen()).as("the runner goes on").isTrue();
  }

  @Test
  void poolPreload_ofAModuleThatDoesNotExist_isReportedByCheckSetup_andRunsGoOn() {
    ListAppender<ILoggingEvent> log = capture(WarmPool.class);
    try (DefaultSandboxService service =
        TestServices.start(dataDir, Map.of("pool_size", "1", "pool_preload", "json,nmupy"))) {
      RunRecord r = service.run(ExecutionRequest.of("import sys\nprint('json' in sys.modules)"));
      assertThat(r.stdout()).isEqualTo("True\n");
      var report = service.checkSetup();
      assertThat(report.problems())
          .anySatisfy(p -> assertThat(p).contains("pool_preload").contains("nmupy"));
      assertThat(report.pool().get("preload_errors").toString())
          .contains("No module named 'nmupy'");
    }
    assertThat(at(log, Level.WARN).stream().map(ILoggingEvent::getFormattedMessage))
        .filteredOn(m -> m.contains("nmupy"))
        .hasSize(1);
  }

  @Test
  void store_whenMigrationFails_isLoggedOnceWithItsCause_andLeavesNoConnectionOpen()
      throws Exception {
    Path db = new DataLayout(dataDir).database();
    JdbcRunStore.openSqlite(db).close();
    try (var c = DriverManager.getConnection("jdbc:sqlite:" + db)) {
      c.createStatement()
          .executeUpdate("UPDATE flyway_schema_history SET checksum = 1 WHERE version = '1'");
    }
    ListAppender<ILoggingEvent> log = capture(StoreHandle.class);
    StoreHandle handle =
        new StoreHandle(() -> JdbcRunStore.openSqlite(db), executor, TimeSource.system());

    for (int i = 0; i < 3; i++) {
      try {
        handle.get();
      } catch (PysandboxException e) {
        assertThat(e.code()).isEqualTo(ErrorCode.STORE_UNAVAILABLE);
        assertThat(e.getMessage()).contains("checksum mismatch");
      }
    }

    assertThat(handle.problem()).hasValueSatisfying(p -> assertThat(p).contains("checksum"));
    assertThat(at(log, Level.WARN)).hasSize(1);
    assertThat(at(log, Level.WARN).get(0).getFormattedMessage()).contains("checksum mismatch");
    assertThat(openDescriptorsOf(db)).as("descriptors left on the database").isEmpty();
  }

  private static List<Path> openDescriptorsOf(Path file) throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(
              fd -> {
                try {
                  return Files.readSymbolicLink(fd).toString().startsWith(file.toString());
                } catch (IOException e) {
                  return false;
                }
              })
          .toList();
    }
  }

  /** The seam: a real sandbox whose kill is never confirmed (a launcher that died, say). */
  static final class KillFails implements Sandbox {
    private final Sandbox real;

    KillFails(Sandbox real) {
      this.real = real;
    }

    @Override
    public CompletableFuture<KillReport> kill(String reason) {
      return CompletableFuture.failedFuture(new IOException("the launcher is gone"));
    }

    @Override
    public String id() {
      return real.id();
    }

    @Override
    public Path workspace() {
      return real.workspace();
    }

    @Override
    public boolean diskQuotaEnforced() {
      return real.diskQuotaEnforced();
    }

    @Override
    public void releaseWorkspace() {
      real.releaseWorkspace();
    }

    @Override
    public HostUser hostUser() {
      return real.hostUser();
    }

    @Override
    public Worker worker() {
      return real.worker();
    }

    @Override
    public CompletableFuture<SandboxExit> exited() {
      return real.exited();
    }

    @Override
    public Limits limits() {
      return real.limits();
    }

    @Override
    public Optional<ResourceUsage> usage() {
      return real.usage();
    }

    @Override
    public void resetPeak() {
      real.resetPeak();
    }
  }
}

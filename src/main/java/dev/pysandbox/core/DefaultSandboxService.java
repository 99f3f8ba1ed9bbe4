package dev.pysandbox.core;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.backend.bwrap.BwrapBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.jdbc.JdbcRunStore;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core. Owns the store, the backend, the worker hub and the warm pool; turns requests into
 * runs: validate, record as running, take a sandbox, execute with the limits, collect the
 * workspace's files, record the outcome atomically.
 *
 * <p>Start-up is cheap: the store is opened and migrated, runs and sandboxes left by dead servers
 * are cleaned up and the pool is filled in the background, so that an MCP client gets its tool list
 * at once; the first run waits for whatever it needs.
 */
public final class DefaultSandboxService implements SandboxService {
  private static final Logger log = LoggerFactory.getLogger(DefaultSandboxService.class);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final PysandboxConfig config;
  private final DataLayout layout;
  private final Clock clock;
  private final InstanceRegistry instances;
  private final WorkerHub hub;
  private final ExecutorService blocking;
  private final BwrapBackend backend;
  private final WarmPool pool;
  private final RequestValidator validator;
  private final CompletableFuture<RunStore> store = new CompletableFuture<>();
  private final CompletableFuture<Void> housekeeping = new CompletableFuture<>();
  private boolean backgroundStarted;

  private DefaultSandboxService(PysandboxConfig config, Clock clock) throws IOException {
    this.config = config;
    this.layout = new DataLayout(config.dataDir());
    this.clock = clock;
    Files.createDirectories(config.dataDir());
    restrict(config.dataDir());
    this.instances = new InstanceRegistry(layout.instancesDir());
    this.hub = WorkerHub.open(socketPath(layout, instances.id()));
    AtomicInteger threads = new AtomicInteger();
    this.blocking =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "pysandbox-worker-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.backend = new BwrapBackend(config, layout, hub, instances.id(), blocking);
    this.pool =
        new WarmPool(
            backend,
            new SandboxSpec(config.poolPreload(), config.outputLimitBytes()),
            config.poolSize(),
            config.startupTimeoutSeconds());
    this.validator = new RequestValidator(config);
  }

  /** Starts the core; returns at once while the store and the pool get ready behind it. */
  public static DefaultSandboxService start(PysandboxConfig config) {
    DefaultSandboxService s = create(config, Clock.systemUTC());
    s.startBackground();
    return s;
  }

  /**
   * Builds the core without starting its background work, so that a face can first get ready to
   * answer (an MCP client waits for its tool list) while nothing competes for the CPU; call {@link
   * #startBackground()} next. Calls that need the store or a sandbox wait for it.
   */
  public static DefaultSandboxService create(PysandboxConfig config, Clock clock) {
    for (String warning : config.warnings()) {
      log.warn("configuration: {}", warning);
    }
    try {
      return new DefaultSandboxService(config, clock);
    } catch (IOException | UncheckedIOException e) {
      throw new PysandboxException(
          ErrorCode.STORE_UNAVAILABLE,
          "cannot use the data directory " + config.dataDir() + ": " + e.getMessage(),
          e);
    }
  }

  /** Opens the store, cleans up after dead servers and fills the warm pool, in the background. */
  public synchronized void startBackground() {
    if (backgroundStarted) {
      return;
    }
    backgroundStarted = true;
    CompletableFuture.supplyAsync(this::openStore, blocking)
        .whenComplete((s, e) -> complete(store, s, e));
    CompletableFuture.runAsync(this::startBackend, blocking)
        .whenComplete((v, e) -> complete(housekeeping, v, e));
  }

  private static <T> void complete(CompletableFuture<T> f, T value, Throwable error) {
    if (error != null) {
      f.completeExceptionally(error instanceof CompletionException c ? c.getCause() : error);
    } else {
      f.complete(value);
    }
  }

  private RunStore openStore() {
    RunStore s = JdbcRunStore.openSqlite(layout.database());
    List<String> interrupted = s.interruptOrphans(instances::isAlive);
    if (!interrupted.isEmpty()) {
      log.warn(
          "marked {} runs of stopped servers as interrupted: {}", interrupted.size(), interrupted);
    }
    return s;
  }

  private void startBackend() {
    if (backend.unavailableReason().isPresent()) {
      log.warn("sandbox backend unavailable: {}", backend.unavailableReason().get());
      return;
    }
    int killed = backend.reapOrphans(instances::isAlive);
    if (killed > 0) {
      log.warn("killed {} sandbox processes left by stopped servers", killed);
    }
    removeDeadWorkspaces();
    pool.refill();
  }

  private void removeDeadWorkspaces() {
    try (var dirs = Files.list(layout.workspacesDir())) {
      for (Path dir : dirs.toList()) {
        String instance = BwrapBackend.instanceOf(dir.getFileName().toString());
        if (instance != null && !instances.isAlive(instance)) {
          WorkspaceFiles.deleteTree(dir);
        }
      }
    } catch (IOException | UncheckedIOException e) {
      log.warn("could not clean old workspaces in {}: {}", layout.workspacesDir(), e.getMessage());
    }
  }

  // -- runs --------------------------------------------------------------------------------------

  @Override
  public RunRecord run(ExecutionRequest request) {
    int timeout = validator.validate(request);
    if (request.sessionId() != null) {
      throw PysandboxException.invalid(
          "session_id '"
              + request.sessionId()
              + "' given, but sessions are not enabled on this server");
    }
    backend
        .unavailableReason()
        .ifPresent(
            why -> {
              throw new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, why);
            });
    RunStore runs = store();
    RunRecord.Builder run =
        RunRecord.builder()
            .runId(newRunId())
            .description(request.description())
            .status(RunStatus.RUNNING)
            .code(request.code())
            .codeHash(sha256(request.code()))
            .timeoutSeconds(timeout)
            .backend(backend.name())
            .createdAt(clock.instant().toString());
    long t0 = System.nanoTime();
    runs.insert(run.build(), instances.id());
    long t1 = System.nanoTime();
    Sandbox sandbox;
    try {
      sandbox = pool.take();
    } catch (PysandboxException e) {
      finish(
          runs,
          run.status(RunStatus.FAILED).message("no sandbox could be started: " + e.getMessage()));
      throw e;
    }
    try {
      Execution.run(sandbox, request.code(), timeout, run);
    } catch (RuntimeException e) {
      sandbox.kill("execution error");
      finish(runs, run.status(RunStatus.FAILED).message("internal error: " + e.getMessage()));
      throw e;
    }
    long t2 = System.nanoTime();
    collectOneShotFiles(sandbox, run);
    long t3 = System.nanoTime();
    RunRecord done = finish(runs, run);
    if (log.isDebugEnabled()) {
      log.debug(
          "run {}: insert {} us, sandbox+exec {} us, files {} us, finish {} us",
          done.runId(),
          (t1 - t0) / 1000,
          (t2 - t1) / 1000,
          (t3 - t2) / 1000,
          (System.nanoTime() - t3) / 1000);
    }
    return done.toBuilder().code(null).build();
  }

  /**
   * A one-shot sandbox is killed, then its workspace becomes the run's files. The common case, an
   * empty workspace, does not wait for the kill: the directory is removed once it is done.
   */
  private void collectOneShotFiles(Sandbox sandbox, RunRecord.Builder run) {
    Path workspace = sandbox.workspace();
    boolean empty = WorkspaceFiles.isEmpty(workspace);
    var killed = sandbox.kill("one-shot run finished");
    if (empty) {
      killed.whenCompleteAsync((report, err) -> WorkspaceFiles.deleteTree(workspace), blocking);
      return;
    }
    try {
      sandbox.exited().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      log.warn("sandbox {} did not exit 5 s after SIGKILL", sandbox.id());
    }
    String runId = run.build().runId();
    try {
      var files = WorkspaceFiles.snapshot(workspace, Map.of());
      run.artifacts(WorkspaceFiles.diff(Map.of(), files));
      Path target = layout.runFiles(runId);
      Files.createDirectories(target.getParent());
      Files.move(workspace, target);
      run.artifactsDir(target.toString());
    } catch (IOException | UncheckedIOException e) {
      log.warn("could not keep the files of run {}: {}", runId, e.getMessage());
      WorkspaceFiles.deleteTree(workspace);
    }
  }

  private RunRecord finish(RunStore runs, RunRecord.Builder run) {
    RunRecord r =
        run.finishedAt(clock.instant().toString())
            .viewCommand("pysandbox runs show " + run.build().runId())
            .build();
    runs.finish(r);
    return r;
  }

  @Override
  public RunPage listRuns(RunQuery query) {
    if (query.sessionId() != null) {
      RequestValidator.validateId("session_id", query.sessionId());
    }
    return store().list(query);
  }

  @Override
  public RunRecord getRun(String runId, boolean includeCode) {
    RequestValidator.validateId("run_id", runId);
    return store()
        .get(runId, includeCode)
        .map(r -> r.toBuilder().viewCommand("pysandbox runs show " + r.runId()).build())
        .orElseThrow(
            () -> new PysandboxException(ErrorCode.NOT_FOUND, "no run with id '" + runId + "'"));
  }

  private RunStore store() {
    try {
      return store.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof PysandboxException p) {
        throw p;
      }
      throw new PysandboxException(
          ErrorCode.STORE_UNAVAILABLE, "run store unavailable: " + e.getCause(), e);
    }
  }

  // -- set-up ------------------------------------------------------------------------------------

  @Override
  public SetupReport checkSetup() {
    return SetupCheck.report(config, backend, pool);
  }

  /** Waits until start-up housekeeping (orphan cleanup, first pool fill) has run. */
  public void awaitStarted() {
    housekeeping.join();
    store();
  }

  @Override
  public void close() {
    pool.close();
    backend.close();
    hub.close();
    store.thenAccept(RunStore::close);
    blocking.shutdown();
    try {
      blocking.awaitTermination(3, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    instances.close();
  }

  // -- helpers -----------------------------------------------------------------------------------

  private static String newRunId() {
    byte[] b = new byte[10];
    RANDOM.nextBytes(b);
    return "run_" + HexFormat.of().formatHex(b);
  }

  static String sha256(String code) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(code.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Path socketPath(DataLayout layout, String instance) {
    Path preferred = layout.runtimeDir().resolve("io-" + instance + ".sock");
    if (preferred.toString().getBytes(StandardCharsets.UTF_8).length <= 100) {
      return preferred;
    }
    return Path.of(
        System.getProperty("java.io.tmpdir"),
        "pysandbox-" + HostUser.currentUid(),
        "io-" + instance + ".sock");
  }

  private static void restrict(Path dir) {
    try {
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    } catch (IOException | UnsupportedOperationException e) {
      log.debug("could not set permissions of {}", dir, e);
    }
  }
}

package dev.pysandbox.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunOutputs;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.backend.bwrap.BwrapBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.jdbc.JdbcRunStore;
import dev.pysandbox.worker.WorkerHub;
import dev.pysandbox.worker.WorkerLostException;
import dev.pysandbox.worker.WorkerReply;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core. Owns the store, the backend, the worker hub, the warm pool and the sessions; turns
 * requests into runs and session operations. Everything a caller sends is validated here before
 * anything is created.
 *
 * <p>Start-up is cheap: the store is opened and migrated, runs and sandboxes left by dead servers
 * are cleaned up and the pool is filled in the background, so that an MCP client gets its tool list
 * at once; the first call waits for whatever it needs.
 */
public final class DefaultSandboxService implements SandboxService {
  private static final Logger log = LoggerFactory.getLogger(DefaultSandboxService.class);
  private static final long CONTEXT_TIMEOUT_SECONDS = 30;

  /** How long closing waits for runs in flight to record that they were interrupted. */
  private static final long CLOSE_RUNS_WAIT_MILLIS = 600;

  private final PysandboxConfig config;
  private final DataLayout layout;
  private final Clock clock;
  private final InstanceRegistry instances;
  private final WorkerHub hub;
  private final ExecutorService blocking;
  private final ScheduledExecutorService timer;
  private final ExecutorService journal;
  private final BwrapBackend backend;
  private final WarmPool pool;
  private final RequestValidator validator;
  private final SessionManager sessions;
  private final RunExecutor runs;
  private final StoreHandle store;
  private final CompletableFuture<Void> housekeeping = new CompletableFuture<>();
  private boolean backgroundStarted;
  private boolean readOnly;
  private final AtomicBoolean closed = new AtomicBoolean();

  private DefaultSandboxService(PysandboxConfig config, Clock clock) throws IOException {
    this.config = config;
    this.layout = new DataLayout(config.dataDir());
    this.clock = clock;
    Files.createDirectories(config.dataDir());
    restrict(config.dataDir());
    NativeFs.useDirectory(layout.nativeDir());
    this.instances = new InstanceRegistry(layout.instancesDir());
    this.hub = WorkerHub.open(socketPath(layout, instances.id()));
    AtomicInteger threads = new AtomicInteger();
    this.blocking =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            60,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> {
              Thread t = new Thread(r, "pysandbox-worker-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            },
            // After close, late clean-up (a killed sandbox's exit hook, say) is dropped: the
            // process is going, and close() has already removed what it would have.
            (task, pool) -> log.debug("dropped a task submitted after shutdown: {}", task));
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "pysandbox-timer");
              t.setDaemon(true);
              return t;
            });
    this.store = new StoreHandle(this::openStore, blocking);
    this.backend = new BwrapBackend(config, layout, hub, instances.id(), blocking);
    this.pool =
        new WarmPool(
            backend,
            new SandboxSpec(
                config.poolPreload(),
                config.outputLimitBytes(),
                config.defaultLimits(),
                config.outputMaxBytes()),
            config.poolSize(),
            config.startupTimeoutSeconds(),
            timer,
            clock);
    backend.onLauncherLost(pool::refillNow);
    this.validator = new RequestValidator(config);
    this.journal =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "pysandbox-journal");
              t.setDaemon(true);
              return t;
            });
    this.sessions =
        new SessionManager(
            config,
            clock,
            pool,
            blocking,
            this::sessionClosed,
            this::recordSession,
            s -> store().claimSession(s.info(), instances.id(), instances::isAlive));
    this.runs =
        new RunExecutor(
            layout,
            clock,
            instances.id(),
            backend.name(),
            this::store,
            blocking,
            config.cancelGraceSeconds(),
            config.outputMaxBytes());
  }

  /** Starts the core; returns at once while the store and the pool get ready behind it. */
  public static DefaultSandboxService start(PysandboxConfig config) {
    DefaultSandboxService s = create(config, Clock.systemUTC());
    s.startBackground();
    return s;
  }

  /**
   * Opens the core for a command that only reads and asks (history, sessions, doctor): it cleans up
   * after nobody — no orphan runs marked, no sandbox or cgroup of a dead server removed, no pool,
   * no timers — so that looking never changes what another server is doing.
   */
  public static DefaultSandboxService openReadOnly(PysandboxConfig config) {
    DefaultSandboxService s = create(config, Clock.systemUTC());
    s.readOnly = true;
    s.startBackground();
    return s;
  }

  /**
   * Builds the core without starting its background work, so that a face can first get ready to
   * answer (an MCP client waits for its tool list) while nothing competes for the CPU; call {@link
   * #startBackground()} next. Calls that need the store or a sandbox wait for it.
   *
   * @param clock the time sessions expire by (tests pass one they can move)
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
    store.open();
    if (readOnly) {
      housekeeping.complete(null);
      return;
    }
    CompletableFuture.runAsync(this::startBackend, blocking)
        .whenComplete((v, e) -> complete(housekeeping, v, e));
    timer.scheduleWithFixedDelay(this::expireSafely, 30, 30, TimeUnit.SECONDS);
    timer.scheduleWithFixedDelay(this::closeRequested, 1, 1, TimeUnit.SECONDS);
    timer.scheduleWithFixedDelay(this::retryDeferredSafely, 1, 1, TimeUnit.SECONDS);
  }

  private void retryDeferredSafely() {
    try {
      runs.retryDeferred();
    } catch (RuntimeException e) {
      log.warn("writing deferred run results failed: {}", e.getMessage());
    }
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
    if (readOnly) {
      return s;
    }
    List<String> lost = s.closeOrphanSessions(instances::isAlive);
    if (!lost.isEmpty()) {
      log.info("sessions of stopped servers recorded as closed: {}", lost);
    }
    List<String> interrupted = s.interruptOrphans(instances::isAlive);
    if (!interrupted.isEmpty()) {
      log.warn(
          "marked {} runs of stopped servers as interrupted: {}", interrupted.size(), interrupted);
    }
    return s;
  }

  private void startBackend() {
    try {
      NativeFs.require();
    } catch (PysandboxException e) {
      log.error("{}: workspaces cannot be read, so runs will fail", e.getMessage());
    }
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
  public RunRecord run(ExecutionRequest request, RunListener listener) {
    int timeout = validator.validate(request);
    requireBackend();
    if (request.sessionId() != null) {
      Session s = sessions.open(request.sessionId(), null);
      return sessions.with(
          s,
          sandbox ->
              runs.inSession(
                  runs.begin(request, timeout, s, listener),
                  s,
                  sandbox,
                  request.code(),
                  timeout,
                  sessions));
    }
    RunRecord.Builder run = runs.begin(request, timeout, null, listener);
    Sandbox sandbox;
    try {
      sandbox = pool.take();
    } catch (PysandboxException e) {
      runs.fail(run, "no sandbox could be started: " + e.getMessage());
      throw e;
    }
    return runs.oneShot(run, sandbox, request.code(), timeout);
  }

  @Override
  public CancelResult cancelRun(String runId) {
    Ids.requireRunId(runId);
    CancelResult r = runs.cancel(runId, sessions);
    if (r != null) {
      return r;
    }
    RunRecord stored = getRun(runId, false);
    return new CancelResult(
        runId,
        false,
        stored.status(),
        "run " + runId + " is not running (it is " + stored.status().wireName() + ")");
  }

  @Override
  public RunPage listRuns(RunQuery query) {
    return store().list(query);
  }

  @Override
  public RunRecord getRun(String runId, boolean includeCode) {
    Ids.requireRunId(runId);
    return store()
        .get(runId, includeCode)
        .map(r -> r.toBuilder().viewCommand(RunExecutor.viewCommand(r.runId())).build())
        .orElseThrow(
            () -> new PysandboxException(ErrorCode.NOT_FOUND, "no run with id '" + runId + "'"));
  }

  @Override
  public RunOutputs getRunOutputs(String runId) {
    RunRecord r = getRun(runId, false);
    return new RunOutputs(runId, r.outputs(), r.outputsNonJson());
  }

  // -- sessions ----------------------------------------------------------------------------------

  @Override
  public SessionInfo createSession(String sessionId, Integer ttlMinutes, LimitRequest limits) {
    String id = sessionId == null ? SessionManager.newId() : Ids.requireSessionId(sessionId);
    RequestValidator.ttlMinutes(ttlMinutes);
    Limits wanted = validator.limits(limits);
    requireBackend();
    Session s = sessions.open(id, ttlMinutes, wanted);
    sessions.ready(s);
    return s.info();
  }

  @Override
  public List<SessionInfo> listSessions() {
    return sessions.list();
  }

  @Override
  public List<SessionInfo> listRecordedSessions() {
    return store().openSessions();
  }

  @Override
  public SessionInfo closeSession(String sessionId) {
    Ids.requireSessionId(sessionId);
    if (sessions.find(sessionId) != null || !store().requestClose(sessionId)) {
      return sessions.close(sessionId, "closed by request");
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      var still =
          store().openSessions().stream().filter(s -> s.sessionId().equals(sessionId)).findFirst();
      if (still.isEmpty()) {
        return new SessionInfo(sessionId, SessionState.CLOSED, null, null, 0, 0, 0, null, null);
      }
      sleep(100);
    }
    throw new PysandboxException(
        ErrorCode.SESSION_BUSY,
        "session '"
            + sessionId
            + "' belongs to another server process, which has not closed it within 10 s"
            + " (it may be running code)");
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Writes a session's state to the store, in order, off the caller's path. A change of state is
   * written at once; mere use (run count, last use) at most every 2 s per session, so that a busy
   * session does not cost a store write per call.
   */
  private void recordSession(Session s) {
    SessionState state = s.state();
    if (!s.recordNow(state, System.nanoTime(), TimeUnit.SECONDS.toNanos(2))) {
      if (s.scheduleRecord()) {
        timer.schedule(() -> writeSession(s), 2, TimeUnit.SECONDS);
      }
      return;
    }
    writeSession(s);
  }

  private void writeSession(Session s) {
    s.recorded();
    SessionInfo info = s.info();
    journal.execute(
        () -> {
          try {
            store().saveSession(info, instances.id());
          } catch (RuntimeException e) {
            log.warn("could not record session {}: {}", info.sessionId(), e.getMessage());
          }
        });
  }

  /** Closes sessions another process asked to close (pysandbox sessions close). */
  private void closeRequested() {
    if (store.ifOpen().isEmpty()) {
      return;
    }
    try {
      for (String id : store().closeRequests(instances.id())) {
        try {
          sessions.close(id, "closed on request from another process");
        } catch (PysandboxException e) {
          log.debug("close request for {} deferred: {}", id, e.getMessage());
        }
      }
    } catch (RuntimeException e) {
      log.warn("checking close requests failed: {}", e.getMessage());
    }
  }

  /** After a session is closed and its sandbox killed: its workspace goes, unless kept. */
  private void sessionClosed(Session s, Sandbox sandbox) {
    Execution.await(sandbox.kill("session closed"));
    if (config.keepWorkspaces()) {
      WorkspaceDisposal.keep(sandbox);
    } else {
      WorkspaceDisposal.discard(sandbox);
    }
  }

  /** Closes sessions idle past their TTL (run every 30 s; tests call it with a moved clock). */
  List<String> expireIdleSessions() {
    return sessions.expireIdle();
  }

  private void expireSafely() {
    try {
      List<String> closed = sessions.expireIdle();
      if (!closed.isEmpty()) {
        log.info("closed idle sessions: {}", closed);
      }
    } catch (RuntimeException e) {
      log.warn("session expiry failed", e);
    }
  }

  @Override
  public UploadResult uploadFile(UploadRequest req) {
    String filename = req.filename();
    byte[] data = decode(req);
    requireBackend();
    Session s = sessions.open(req.sessionId(), null);
    boolean root = HostUser.currentUid() == 0;
    return sessions.with(
        s,
        sandbox -> {
          HostUser owner = root ? sandbox.hostUser() : null;
          long quota = sandbox.limits().diskBytes();
          if (s.workspaceBytes() + data.length > quota
              || data.length > roomInOwnFileSystem(sandbox)) {
            throw new PysandboxException(
                ErrorCode.ARTIFACT_TOO_LARGE,
                "the file ("
                    + data.length
                    + " bytes) would take session '"
                    + s.id
                    + "' past its disk quota of "
                    + quota / Limits.MIB
                    + " MiB ("
                    + s.workspaceBytes()
                    + " bytes used); delete files first or ask create_session for a larger"
                    + " disk_quota_mb");
          }
          UploadResult r =
              WorkspaceAccess.write(
                  s.id, sandbox.workspace(), filename, data, req.overwrite(), owner);
          s.files(WorkspaceFiles.snapshot(sandbox.workspace(), s.files(), true));
          return r;
        });
  }

  /**
   * What a workspace that is a file system of its own can still take (its metadata takes some of
   * the quota, so the files' sizes alone do not tell); unbounded for a plain directory.
   */
  private static long roomInOwnFileSystem(Sandbox sandbox) {
    if (!sandbox.diskQuotaEnforced()) {
      return Long.MAX_VALUE;
    }
    try {
      // Less a block for the file's own metadata.
      return Math.max(0, Files.getFileStore(sandbox.workspace()).getUsableSpace() - 4096);
    } catch (IOException e) {
      return Long.MAX_VALUE;
    }
  }

  private byte[] decode(UploadRequest req) {
    long max = config.uploadMaxBytes();
    if (req.content() != null) {
      byte[] bytes = req.content().getBytes(StandardCharsets.UTF_8);
      if (bytes.length > max) {
        throw tooLarge(bytes.length, max);
      }
      return bytes;
    }
    String b64 = req.contentBase64();
    long decodedAtLeast = (long) b64.replaceAll("[\\s=]", "").length() * 3 / 4;
    if (decodedAtLeast > max) {
      throw tooLarge(decodedAtLeast, max);
    }
    try {
      return java.util.Base64.getMimeDecoder().decode(strictBase64(b64));
    } catch (IllegalArgumentException e) {
      throw PysandboxException.invalid("content_base64 is not valid base64: " + e.getMessage());
    }
  }

  /** The MIME decoder skips junk silently; refuse anything but base64 and whitespace first. */
  private static String strictBase64(String b64) {
    for (int i = 0; i < b64.length(); i++) {
      char c = b64.charAt(i);
      boolean ok =
          (c >= 'A' && c <= 'Z')
              || (c >= 'a' && c <= 'z')
              || (c >= '0' && c <= '9')
              || c == '+'
              || c == '/'
              || c == '='
              || Character.isWhitespace(c);
      if (!ok) {
        throw new IllegalArgumentException("character '" + c + "' at index " + i);
      }
    }
    return b64;
  }

  private static PysandboxException tooLarge(long size, long max) {
    return PysandboxException.invalid(
        "the file is "
            + size
            + " bytes; upload_max_bytes is "
            + max
            + " (checked before decoding)");
  }

  @Override
  public ArtifactList listArtifacts(String runId, String sessionId) {
    RequestValidator.requireExactlyOne(runId, sessionId);
    if (sessionId != null) {
      Ids.requireSessionId(sessionId);
      Session s = sessions.require(sessionId);
      Sandbox sandbox = s.sandbox.getNow(null);
      var files =
          sandbox == null
              ? Map.<String, WorkspaceFiles.FileState>of()
              : WorkspaceFiles.snapshot(sandbox.workspace(), s.files(), true).files();
      return new ArtifactList(sessionId, null, WorkspaceAccess.list(files), List.of());
    }
    RunRecord r = getRun(runId, false);
    Path dir = layout.runFiles(runId);
    var files =
        Files.isDirectory(dir)
            ? WorkspaceFiles.snapshot(dir, Map.of(), true).files()
            : Map.<String, WorkspaceFiles.FileState>of();
    return new ArtifactList(null, runId, WorkspaceAccess.list(files), r.artifacts());
  }

  @Override
  public ArtifactContent readArtifact(
      String runId, String sessionId, String path, long maxSizeBytes) {
    RequestValidator.requireExactlyOne(runId, sessionId);
    RequestValidator.maxSizeBytes(maxSizeBytes);
    WorkspaceAccess.validatePath(path);
    if (sessionId != null) {
      Ids.requireSessionId(sessionId);
      Session s = sessions.require(sessionId);
      Sandbox sandbox = s.sandbox.getNow(null);
      if (sandbox == null) {
        throw new PysandboxException(
            ErrorCode.NOT_FOUND, "session '" + sessionId + "' has no workspace yet");
      }
      return WorkspaceAccess.read(
          sandbox.workspace(),
          path,
          maxSizeBytes,
          config.readMaxBytes(),
          "session '" + sessionId + "'");
    }
    getRun(runId, false);
    Path dir = layout.runFiles(runId);
    if (!Files.isDirectory(dir)) {
      throw new PysandboxException(ErrorCode.NOT_FOUND, "run " + runId + " kept no files");
    }
    return WorkspaceAccess.read(dir, path, maxSizeBytes, config.readMaxBytes(), "run " + runId);
  }

  // -- context -----------------------------------------------------------------------------------

  @Override
  public ContextSnapshot getContext(String sessionId, List<String> names) {
    ObjectNode payload = Json.mapper().createObjectNode();
    if (names != null) {
      names.forEach(n -> RequestValidator.validateName(n));
      payload.set("names", Json.mapper().valueToTree(names));
    }
    JsonNode frame = contextCall(sessionId, "get_context", payload);
    @SuppressWarnings("unchecked")
    Map<String, Object> variables = Json.mapper().convertValue(frame.path("variables"), Map.class);
    List<String> missing = new java.util.ArrayList<>();
    frame.path("missing").forEach(n -> missing.add(n.asText()));
    return new ContextSnapshot(sessionId, variables, missing);
  }

  @Override
  public ContextSnapshot setContext(String sessionId, Map<String, Object> values) {
    if (values == null || values.isEmpty()) {
      throw PysandboxException.invalid("values must be a non-empty JSON object");
    }
    values.keySet().forEach(n -> RequestValidator.validateName(n));
    ObjectNode payload = Json.mapper().createObjectNode();
    payload.set("values", Json.mapper().valueToTree(values));
    contextCall(sessionId, "set_context", payload);
    return getContext(sessionId, List.copyOf(values.keySet()));
  }

  @Override
  public SessionInfo clearContext(String sessionId) {
    contextCall(sessionId, "clear_context", Json.mapper().createObjectNode());
    return sessions.require(sessionId).info();
  }

  private JsonNode contextCall(String sessionId, String op, ObjectNode payload) {
    Ids.requireSessionId(sessionId);
    Session s = sessions.require(sessionId);
    return sessions.with(
        s,
        sandbox -> {
          try {
            WorkerReply r =
                sandbox
                    .worker()
                    .request(op, payload)
                    .get(CONTEXT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            if (!"ok".equals(r.frame().path("status").asText())) {
              throw PysandboxException.invalid(
                  op + " failed: " + r.frame().path("error").path("value").asText("unknown error"));
            }
            return r.frame();
          } catch (IllegalStateException e) {
            sessions.markDead(s, "exited: " + e.getMessage());
            throw SessionManager.dead(s);
          } catch (ExecutionException e) {
            if (e.getCause() instanceof WorkerLostException lost) {
              sessions.markDead(s, "exited: during " + op + ", " + lost.getMessage());
              throw SessionManager.dead(s);
            }
            throw new PysandboxException(ErrorCode.INTERNAL, op + " failed: " + e.getCause(), e);
          } catch (TimeoutException e) {
            sessions.markDead(
                s, "killed: " + op + " did not answer within " + CONTEXT_TIMEOUT_SECONDS + " s");
            throw SessionManager.dead(s);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PysandboxException(ErrorCode.INTERNAL, "interrupted", e);
          }
        });
  }

  // -- set-up ------------------------------------------------------------------------------------

  private void requireBackend() {
    backend
        .unavailableReason()
        .ifPresent(
            why -> {
              throw new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, why);
            });
  }

  private RunStore store() {
    return store.get();
  }

  @Override
  public SetupReport checkSetup() {
    try {
      store();
    } catch (PysandboxException e) {
      // reported below, from the handle
    }
    return SetupCheck.report(config, backend, pool, sessions.size(), store.problem(), clock);
  }

  /** Waits until start-up housekeeping (orphan cleanup, first pool fill) has run. */
  public void awaitStarted() {
    housekeeping.join();
    store();
  }

  /**
   * Stops every run in flight: each is killed and recorded {@code interrupted} with {@code reason},
   * and answers its caller. Waits at most {@code timeoutMillis} for them to be recorded.
   */
  public void interruptRuns(String reason, long timeoutMillis) {
    runs.interruptAll(reason);
    List<String> left = runs.awaitIdle(timeoutMillis);
    if (!left.isEmpty()) {
      log.warn("runs still finishing after {} ms: {}", timeoutMillis, left);
    }
  }

  @Override
  public void close() {
    close("the server stopped");
  }

  /**
   * Stops the server within about a second: runs in flight end {@code interrupted} with {@code
   * reason}, every sandbox is killed and reaped, this server's cgroups are removed, sessions are
   * recorded closed. Idempotent.
   */
  public void close(String reason) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    timer.shutdownNow();
    runs.interruptAll(reason);
    sessions.closeAll();
    pool.close();
    runs.awaitIdle(CLOSE_RUNS_WAIT_MILLIS);
    journal.shutdown();
    awaitTermination(journal, 300);
    backend.close();
    hub.close();
    retryDeferredSafely();
    store
        .ifOpen()
        .ifPresent(
            s -> {
              try {
                // Whatever did not get to record its end in time is recorded interrupted now.
                s.interruptOrphans(instance -> !instance.equals(instances.id()));
              } catch (RuntimeException e) {
                log.warn("could not record the runs in flight as interrupted: {}", e.getMessage());
              }
              s.close();
            });
    blocking.shutdown();
    awaitTermination(blocking, 200);
    instances.close();
  }

  private static void awaitTermination(ExecutorService pool, long millis) {
    try {
      pool.awaitTermination(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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

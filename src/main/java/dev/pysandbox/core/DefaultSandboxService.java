package dev.pysandbox.core;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.Ids;
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
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.util.TimeSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core as the faces see it: each call is handed to the part whose job it is (see {@link
 * ServiceWiring} for the parts, and docs/DESIGN.md, "Core by role").
 *
 * <p>Start-up is cheap: the store is opened and migrated, runs and sandboxes left by dead servers
 * are cleaned up and the pool is filled in the background, so that an MCP client gets its tool list
 * at once; the first call waits for whatever it needs.
 */
public final class DefaultSandboxService implements SandboxService, Tenants {
  private static final Logger log = LoggerFactory.getLogger(DefaultSandboxService.class);

  private final ServiceWiring core;

  private DefaultSandboxService(ServiceWiring core) {
    this.core = core;
  }

  /** Starts the core; returns at once while the store and the pool get ready behind it. */
  public static DefaultSandboxService start(PysandboxConfig config) {
    DefaultSandboxService s = create(config, TimeSource.system());
    s.startBackground();
    return s;
  }

  /**
   * Opens the core for a command that only reads and asks (history, sessions, doctor): it cleans up
   * after nobody — no orphan runs marked, no sandbox or cgroup of a dead server removed, no pool,
   * no timers — so that looking never changes what another server is doing.
   */
  public static DefaultSandboxService openReadOnly(PysandboxConfig config) {
    DefaultSandboxService s = build(config, TimeSource.system(), true);
    s.startBackground();
    return s;
  }

  /**
   * Builds the core without starting its background work, so that a face can first get ready to
   * answer (an MCP client waits for its tool list) while nothing competes for the CPU; call {@link
   * #startBackground()} next. Calls that need the store or a sandbox wait for it.
   *
   * @param clock the time the core records and waits by: {@link TimeSource#system()}, or in tests a
   *     source they move on (a plain {@link Clock} gives its instants, real monotonic time)
   */
  public static DefaultSandboxService create(PysandboxConfig config, Clock clock) {
    return build(config, clock, false);
  }

  private static DefaultSandboxService build(
      PysandboxConfig config, Clock clock, boolean readOnly) {
    for (String warning : config.warnings()) {
      log.warn("configuration: {}", warning);
    }
    try {
      return new DefaultSandboxService(new ServiceWiring(config, clock, readOnly));
    } catch (IOException | UncheckedIOException e) {
      throw new PysandboxException(
          ErrorCode.STORE_UNAVAILABLE,
          "cannot use the data directory " + config.dataDir() + ": " + e.getMessage(),
          e);
    }
  }

  /** Opens the store, cleans up after dead servers and fills the warm pool, in the background. */
  public void startBackground() {
    core.startBackground();
  }

  /**
   * The view of one tenant. Until the core keeps tenants apart, only {@link Tenants#LOCAL} is
   * served; any other tenant is refused (fails closed).
   */
  @Override
  public SandboxService forTenant(String tenant) {
    if (Tenants.LOCAL.equals(tenant)) {
      return this;
    }
    throw new PysandboxException(
        ErrorCode.INVALID_ARGUMENT,
        "tenant " + PysandboxException.quote(tenant) + " is not served");
  }

  // -- runs --------------------------------------------------------------------------------------

  @Override
  public RunRecord run(ExecutionRequest request, RunListener listener) {
    int timeout = core.validator.validate(request);
    core.requireBackend();
    RunExecutor runs = core.runs;
    if (request.sessionId() != null) {
      Session s = core.sessions.open(request.sessionId(), null);
      return core.sessions.with(
          s,
          sandbox ->
              runs.inSession(
                  runs.begin(request, timeout, s, listener),
                  s,
                  sandbox,
                  request.code(),
                  timeout,
                  core.sessions));
    }
    RunRecord.Builder run = runs.begin(request, timeout, null, listener);
    Sandbox sandbox;
    try {
      sandbox = core.pool.take();
    } catch (PysandboxException e) {
      runs.fail(run, "no sandbox could be started: " + e.getMessage());
      throw e;
    }
    return runs.oneShot(run, sandbox, request.code(), timeout);
  }

  @Override
  public CancelResult cancelRun(String runId) {
    Ids.requireRunId(runId);
    CancelResult r = core.runs.cancel(runId, core.sessions);
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
    return core.store().list(query);
  }

  @Override
  public RunRecord getRun(String runId, boolean includeCode) {
    return core.storedRun(runId, includeCode);
  }

  @Override
  public RunOutputs getRunOutputs(String runId) {
    RunRecord r = getRun(runId, false);
    return new RunOutputs(runId, r.outputs(), r.outputsNonJson());
  }

  // -- sessions ----------------------------------------------------------------------------------

  @Override
  public SessionInfo createSession(String sessionId, Integer ttlMinutes, LimitRequest limits) {
    String id = sessionId == null ? Ids.newSessionId() : Ids.requireSessionId(sessionId);
    RequestValidator.ttlMinutes(ttlMinutes);
    Limits wanted = core.validator.limits(limits);
    core.requireBackend();
    Session s = core.sessions.open(id, ttlMinutes, wanted);
    core.sessions.ready(s);
    return s.info();
  }

  @Override
  public List<SessionInfo> listSessions() {
    return core.sessions.list();
  }

  @Override
  public List<SessionInfo> listRecordedSessions() {
    return core.store().openSessions();
  }

  @Override
  public SessionInfo closeSession(String sessionId) {
    return core.closer.close(sessionId);
  }

  /** Closes sessions idle past their TTL (run every 30 s; tests call it with a moved clock). */
  List<String> expireIdleSessions() {
    return core.sessions.expireIdle();
  }

  // -- files and context -------------------------------------------------------------------------

  @Override
  public UploadResult uploadFile(UploadRequest req) {
    return core.uploads.upload(req);
  }

  @Override
  public UploadResult uploadStream(
      String sessionId, String filename, InputStream content, long maxBytes, boolean overwrite) {
    return core.uploads.uploadStream(sessionId, filename, content, maxBytes, overwrite);
  }

  @Override
  public ArtifactList listArtifacts(String runId, String sessionId) {
    return core.artifacts.list(runId, sessionId);
  }

  @Override
  public ArtifactContent readArtifact(
      String runId, String sessionId, String path, long maxSizeBytes) {
    return core.artifacts.read(runId, sessionId, path, maxSizeBytes);
  }

  @Override
  public FileStream openArtifact(String runId, String sessionId, String path) {
    return core.artifacts.open(runId, sessionId, path);
  }

  @Override
  public ContextSnapshot getContext(String sessionId, List<String> names) {
    return core.context.get(sessionId, names);
  }

  @Override
  public ContextSnapshot setContext(String sessionId, Map<String, Object> values) {
    return core.context.set(sessionId, values);
  }

  @Override
  public SessionInfo clearContext(String sessionId) {
    return core.context.clear(sessionId);
  }

  // -- set-up and shutdown -----------------------------------------------------------------------

  @Override
  public SetupReport checkSetup() {
    try {
      core.store();
    } catch (PysandboxException e) {
      // reported below, from the handle
    }
    return SetupCheck.report(
        core.config,
        core.backend,
        core.pool,
        core.sessions.size(),
        core.store.problem(),
        core.time);
  }

  /** Waits until start-up housekeeping (orphan cleanup, first pool fill) has run. */
  public void awaitStarted() {
    core.awaitStarted();
  }

  /**
   * Stops every run in flight: each is killed and recorded {@code interrupted} with {@code reason},
   * and answers its caller. Waits at most {@code timeoutMillis} for them to be recorded.
   */
  public void interruptRuns(String reason, long timeoutMillis) {
    core.runs.interruptAll(reason);
    List<String> left = core.runs.awaitIdle(timeoutMillis);
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
    core.close(reason);
  }
}

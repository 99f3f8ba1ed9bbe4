package dev.pysandbox.core;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.EventSink;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunOutputs;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.api.Subscription;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.store.StoreFactory;
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
public final class DefaultSandboxService implements OperatorService {
  private static final Logger log = LoggerFactory.getLogger(DefaultSandboxService.class);

  private final ServiceWiring core;
  private final TenantView local;

  private DefaultSandboxService(ServiceWiring core) {
    this.core = core;
    this.local = new TenantView(core, Tenants.LOCAL);
  }

  /** The parts, for tests in this package. */
  ServiceWiring core() {
    return core;
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
    if (!readOnly) {
      // At once, before anything is made: a store that cannot be written never comes right alone.
      StoreFactory.requireWritable(new DataLayout(config.dataDir()));
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
   * Shares {@code max_sessions} among the tenants {@code tenants} counts, when {@code
   * max_sessions_per_tenant} is not set: a server whose keyed HTTP face several tenants share gives
   * each {@code max(1, max_sessions / tenants)}, so one cannot take every session.
   */
  public void shareSessionsAmong(java.util.function.IntSupplier tenants) {
    core.sessions.shareAmong(tenants);
  }

  /**
   * The view of one tenant: what it owns, and nothing of any other tenant's. A view is cheap and
   * holds no state; the faces ask for one per call.
   *
   * @throws PysandboxException {@code invalid_argument} for a name that breaks {@link
   *     Ids#TENANT_REGEX}
   */
  @Override
  public SandboxService forTenant(String tenant) {
    return Tenants.LOCAL.equals(tenant) ? local : new TenantView(core, tenant);
  }

  // -- the tenant local (stdio and the CLI) ------------------------------------------------------

  @Override
  public RunRecord run(ExecutionRequest request, RunListener listener) {
    return local.run(request, listener);
  }

  @Override
  public RunRecord start(ExecutionRequest request, RunListener listener) {
    return local.start(request, listener);
  }

  @Override
  public Subscription attach(String runId, long afterSeq, EventSink sink) {
    return local.attach(runId, afterSeq, sink);
  }

  @Override
  public CancelResult cancelRun(String runId) {
    return local.cancelRun(runId);
  }

  @Override
  public CancelResult cancelRun(String runId, String reason) {
    return local.cancelRun(runId, reason);
  }

  @Override
  public RunPage listRuns(RunQuery query) {
    return local.listRuns(query);
  }

  @Override
  public RunRecord getRun(String runId, boolean includeCode) {
    return local.getRun(runId, includeCode);
  }

  @Override
  public RunRecord getRun(String runId, boolean includeCode, int waitSeconds) {
    return local.getRun(runId, includeCode, waitSeconds);
  }

  @Override
  public RunRecord getRun(
      String runId, boolean includeCode, int waitSeconds, boolean includeNotebookSource) {
    return local.getRun(runId, includeCode, waitSeconds, includeNotebookSource);
  }

  @Override
  public dev.pysandbox.api.ValidationReport validateCode(String code) {
    return local.validateCode(code);
  }

  @Override
  public dev.pysandbox.api.ApprovalList listPendingApprovals() {
    return local.listPendingApprovals();
  }

  @Override
  public dev.pysandbox.api.Approval getApproval(String approvalId) {
    return local.getApproval(approvalId);
  }

  @Override
  public RunRecord decideApproval(
      String approvalId, boolean approve, String decidedBy, String via, String reason) {
    return local.decideApproval(approvalId, approve, decidedBy, via, reason);
  }

  /** Every tenant's pending approvals (for the host's operator: the command line). */
  public dev.pysandbox.api.ApprovalList allPendingApprovals() {
    return core.approvals.pending(null);
  }

  /** Every tenant's runs, each with its tenant (for the host's operator: the command line). */
  public RunPage allRuns(RunQuery query) {
    return core.store().list(null, query);
  }

  /**
   * The open sessions of every tenant, each with its tenant, as the servers sharing the data
   * directory last recorded them (for the host's operator).
   */
  public List<SessionInfo> allRecordedSessions() {
    return core.store().openSessions(null, core.instances::isAlive);
  }

  /** Every tenant's security events, each with its tenant (for the host's operator). */
  public dev.pysandbox.api.SecurityEventList allSecurityEvents(
      dev.pysandbox.api.SecurityEventQuery query) {
    return TenantView.securityEvents(core, null, query);
  }

  /** Any tenant's approval, with its code (for the host's operator). */
  public dev.pysandbox.api.Approval anyApproval(String approvalId) {
    return core.approvals.show(null, approvalId);
  }

  /**
   * Decides any tenant's approval as the host's operator ({@code cli:<user>}); the server holding
   * the run starts it within a second.
   */
  public RunRecord decideAsOperator(String approvalId, boolean approve, String reason) {
    return core.approvals.decide(
        null,
        approvalId,
        approve,
        "cli:" + System.getProperty("user.name", "?"),
        "cli",
        reason,
        RunListener.NONE,
        false);
  }

  @Override
  public dev.pysandbox.api.SecurityEventList listSecurityEvents(
      dev.pysandbox.api.SecurityEventQuery query) {
    return local.listSecurityEvents(query);
  }

  /** Every tenant's: this is the server's own view. */
  @Override
  public dev.pysandbox.api.SecurityEventCounts securityEventCounts() {
    return core.securityEvents.counts();
  }

  /** Every tenant's: this is the server's own view. */
  @Override
  public void recordMetrics(dev.pysandbox.api.MetricsRecorder recorder) {
    core.metrics.to(recorder);
  }

  /** Every tenant's: this is the server's own view. */
  @Override
  public dev.pysandbox.api.ServerLoad load() {
    return core.load();
  }

  @Override
  public RunRecord rerun(dev.pysandbox.api.RerunRequest request, RunListener listener) {
    return local.rerun(request, listener);
  }

  @Override
  public dev.pysandbox.api.RunDiff diffRuns(String runId, String compareTo) {
    return local.diffRuns(runId, compareTo);
  }

  @Override
  public dev.pysandbox.api.DeleteResult deleteRun(String runId, boolean deleteFiles) {
    return local.deleteRun(runId, deleteFiles);
  }

  @Override
  public dev.pysandbox.api.PurgeResult purgeRuns(
      int olderThanDays, dev.pysandbox.api.RunStatus status, boolean dryRun) {
    return local.purgeRuns(olderThanDays, status, dryRun);
  }

  @Override
  public dev.pysandbox.api.SessionExport exportSession(String sessionId, String format) {
    return local.exportSession(sessionId, format);
  }

  /**
   * Builds (or finds) the environment for these packages now, telling {@code progress} each line
   * the build prints ({@code pysandbox envs build}).
   *
   * @throws PysandboxException {@code invalid_argument} for a bad spec, {@code environment_failed}
   *     naming what pip said
   */
  public dev.pysandbox.api.EnvironmentInfo buildEnvironment(
      List<String> packages, java.util.function.Consumer<String> progress) {
    List<dev.pysandbox.packages.Requirement> reqs =
        dev.pysandbox.packages.Requirements.parse(packages);
    if (reqs.isEmpty()) {
      throw PysandboxException.invalid("name at least one package");
    }
    core.requireBackend();
    Environments.Ready env = core.environments.ensure(reqs, Tenants.LOCAL, progress);
    return new dev.pysandbox.api.EnvironmentInfo(
        env.key(),
        env.requirements(),
        env.sizeBytes(),
        env.createdAt().toString(),
        core.environments.lastUsed(env).toString(),
        0,
        core.environments.inUse(env.key()),
        env.envHash(),
        env.pipFreeze());
  }

  /**
   * Recomputes the store's hash chain from the records and files as they are now (every tenant's:
   * for the command line, never a face).
   */
  public dev.pysandbox.api.VerifyReport verifyRecords() {
    return core.review.verify();
  }

  @Override
  public RunOutputs getRunOutputs(String runId) {
    return local.getRunOutputs(runId);
  }

  @Override
  public SessionInfo createSession(
      String sessionId,
      Integer ttlMinutes,
      LimitRequest limits,
      String tier,
      java.util.List<String> packages,
      java.util.List<String> networkAllow) {
    return local.createSession(sessionId, ttlMinutes, limits, tier, packages, networkAllow);
  }

  @Override
  public dev.pysandbox.api.EnvironmentList listEnvironments() {
    return local.listEnvironments();
  }

  @Override
  public dev.pysandbox.api.EnvironmentCleanResult cleanEnvironments(
      int olderThanDays, boolean dryRun) {
    return local.cleanEnvironments(olderThanDays, dryRun);
  }

  @Override
  public dev.pysandbox.api.DownloadResult downloadFile(
      String sessionId, String url, String filename, Boolean overwrite) {
    return local.downloadFile(sessionId, url, filename, overwrite);
  }

  @Override
  public List<SessionInfo> listSessions(boolean includeEnded) {
    return local.listSessions(includeEnded);
  }

  @Override
  public SessionInfo getSession(String sessionId) {
    return local.getSession(sessionId);
  }

  @Override
  public List<SessionInfo> listRecordedSessions() {
    return local.listRecordedSessions();
  }

  @Override
  public SessionInfo closeSession(String sessionId) {
    return local.closeSession(sessionId);
  }

  /** Closes sessions idle past their TTL (run every 30 s; tests call it with a moved clock). */
  List<dev.pysandbox.store.SessionKey> expireIdleSessions() {
    return core.sessions.expireIdle();
  }

  // -- files and context -------------------------------------------------------------------------

  @Override
  public UploadResult uploadFile(UploadRequest req) {
    return local.uploadFile(req);
  }

  @Override
  public UploadResult uploadStream(
      String sessionId, String filename, InputStream content, long maxBytes, boolean overwrite) {
    return local.uploadStream(sessionId, filename, content, maxBytes, overwrite);
  }

  @Override
  public ArtifactList listArtifacts(String runId, String sessionId) {
    return local.listArtifacts(runId, sessionId);
  }

  @Override
  public ArtifactContent readArtifact(
      String runId, String sessionId, String path, long maxSizeBytes) {
    return local.readArtifact(runId, sessionId, path, maxSizeBytes);
  }

  @Override
  public FileStream openArtifact(String runId, String sessionId, String path) {
    return local.openArtifact(runId, sessionId, path);
  }

  @Override
  public ContextSnapshot getContext(String sessionId, List<String> names) {
    return local.getContext(sessionId, names);
  }

  @Override
  public ContextSnapshot setContext(String sessionId, Map<String, Object> values) {
    return local.setContext(sessionId, values);
  }

  @Override
  public SessionInfo clearContext(String sessionId) {
    return local.clearContext(sessionId);
  }

  // -- set-up and shutdown -----------------------------------------------------------------------

  @Override
  public SetupReport checkSetup() {
    return local.checkSetup();
  }

  @Override
  public void recordCall(CallRecord call) {
    local.recordCall(call);
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

  /**
   * A graceful stop's first half: no new run starts (each is refused with a retryable {@code
   * backend_unavailable}); runs in flight may finish within {@code graceMillis}; those still
   * running then are cancelled — their sandboxes killed, each recorded {@code cancelled} with
   * {@code reason}. Call {@link #close(String)} next.
   *
   * @return the ids of the runs cancelled
   */
  public List<String> drain(long graceMillis, String reason) {
    core.runs.refuseNew();
    List<String> left = core.runs.awaitIdle(graceMillis);
    if (left.isEmpty()) {
      return left;
    }
    log.info("cancelling {} run(s) still in flight after the grace period: {}", left.size(), left);
    core.runs.cancelAll(reason);
    List<String> stuck = core.runs.awaitIdle(5_000);
    if (!stuck.isEmpty()) {
      log.warn("runs still finishing after they were cancelled: {}", stuck);
    }
    return left;
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

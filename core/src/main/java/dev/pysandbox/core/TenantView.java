package dev.pysandbox.core;

import dev.pysandbox.api.ApprovalDecision;
import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.DeleteResult;
import dev.pysandbox.api.EventSink;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PurgeResult;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RerunRequest;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunOutputs;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionExport;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.api.Subscription;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.api.ValidationReport;
import dev.pysandbox.core.analysis.DryRuns;
import dev.pysandbox.core.audit.Provenance;
import dev.pysandbox.core.diffs.RunDiffs;
import dev.pysandbox.core.requests.RequestValidator;
import dev.pysandbox.store.SessionKey;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The core as one tenant sees it: every call names its tenant to the part whose job it is (runs to
 * {@link dev.pysandbox.core.runs.Runs}, sessions to {@link dev.pysandbox.core.runs.SessionOpener}
 * and {@link dev.pysandbox.core.sessions.SessionManager}, decisions to {@link ApprovedRuns} …), so
 * that sessions are looked up by (tenant, id), runs are listed by tenant, and a run or session of
 * another tenant answers exactly as one that does not exist ({@code not_found}, the same message,
 * the same path through the code). Cheap: a view holds no state but its tenant's name. The server's
 * own service is the view of the tenant {@code local}, with the server's own calls added.
 */
class TenantView implements SandboxService {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(TenantView.class);

  final ServiceWiring core;
  private final String tenant;

  TenantView(ServiceWiring core, String tenant) {
    this.core = core;
    this.tenant = Ids.requireTenant(tenant);
  }

  String tenant() {
    return tenant;
  }

  // -- runs --------------------------------------------------------------------------------------

  /**
   * A dry run is answered here (nothing runs); every other run is {@link
   * dev.pysandbox.core.runs.Runs}'.
   */
  @Override
  public RunRecord run(ExecutionRequest request, RunListener listener) {
    if (request.dryRun()) {
      return dryRun(request);
    }
    return core.runs.run(tenant, request, listener);
  }

  /** The code's analysis as a run: no sandbox of its own, nothing run, nothing recorded. */
  private RunRecord dryRun(ExecutionRequest request) {
    int timeout =
        core.validator.validate(
            request, core.opener.tierOf(tenant, request.sessionId(), request.tier()));
    core.requireBackend();
    ValidationReport report = core.analysis.analyze(request.code());
    return DryRuns.record(
        tenant,
        request,
        report,
        timeout,
        core.time.instant(),
        Provenance.of(core.backend.interpreter()));
  }

  @Override
  public RunRecord start(ExecutionRequest request, RunListener listener) {
    if (request.dryRun()) {
      return dryRun(request); // answered at once: there is nothing to wait for
    }
    return core.runs.start(tenant, request, listener);
  }

  @Override
  public Subscription attach(String runId, long afterSeq, EventSink sink) {
    Ids.requireRunId(runId);
    return core.live.attach(tenant, runId, afterSeq, sink, core.storedRuns::get);
  }

  @Override
  public RunRecord getRun(String runId, boolean includeCode, int waitSeconds) {
    RequestValidator.waitSeconds(waitSeconds);
    RunRecord r = getRun(runId, includeCode);
    long deadline = core.time.nanoTime() + TimeUnit.SECONDS.toNanos(waitSeconds);
    // A run held for approval is waited for too: it may be approved, run and end meanwhile.
    // An interrupt (the HTTP client went away) ends the wait with the run as it stands.
    while (!r.status().isFinal()
        && core.time.nanoTime() - deadline < 0
        && !Thread.currentThread().isInterrupted()) {
      core.inFlight.awaitEnd(runId, deadline);
      r = getRun(runId, includeCode);
    }
    return r;
  }

  @Override
  public CancelResult cancelRun(String runId) {
    return cancelRun(runId, null);
  }

  @Override
  public CancelResult cancelRun(String runId, String reason) {
    CancelResult r = core.runs.cancel(tenant, runId, reason);
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
    return core.store().list(tenant, query);
  }

  @Override
  public RunRecord getRun(String runId, boolean includeCode) {
    return core.storedRuns.get(tenant, runId, includeCode);
  }

  @Override
  public RunOutputs getRunOutputs(String runId) {
    RunRecord r = getRun(runId, false);
    return new RunOutputs(runId, r.outputs(), r.outputsNonJson());
  }

  // -- safety review -----------------------------------------------------------------------------

  @Override
  public ValidationReport validateCode(String code) {
    core.validator.validate(ExecutionRequest.of(code));
    core.requireBackend();
    return core.analysis.analyze(code);
  }

  @Override
  public dev.pysandbox.api.ApprovalList listPendingApprovals() {
    return core.approvals.pending(tenant);
  }

  @Override
  public dev.pysandbox.api.Approval getApproval(String approvalId) {
    return core.approvals.show(tenant, approvalId);
  }

  @Override
  public RunRecord decideApproval(
      String approvalId, boolean approve, String decidedBy, String via, String reason) {
    return core.approvedRuns.decide(
        tenant, approvalId, new ApprovalDecision(approve, decidedBy, reason), via);
  }

  /**
   * This tenant's events, after writing what this server has queued (so that a caller sees the
   * events of the run it was just answered); {@code next_cursor} only when an older one matches.
   */
  @Override
  public dev.pysandbox.api.SecurityEventList listSecurityEvents(
      dev.pysandbox.api.SecurityEventQuery query) {
    return securityEvents(core, tenant, query);
  }

  /** A page of the tenant's events (every tenant's for null: the operator's). */
  static dev.pysandbox.api.SecurityEventList securityEvents(
      ServiceWiring core, String tenant, dev.pysandbox.api.SecurityEventQuery query) {
    core.securityEvents.flush();
    List<dev.pysandbox.api.SecurityEvent> page = core.store().securityEvents(tenant, query);
    String next = null;
    if (page.size() == query.limit()) {
      String last = page.get(page.size() - 1).eventId();
      dev.pysandbox.api.SecurityEventQuery after =
          new dev.pysandbox.api.SecurityEventQuery(
              query.since(), query.kind(), query.sessionId(), 1, last);
      next = core.store().securityEvents(tenant, after).isEmpty() ? null : last;
    }
    return new dev.pysandbox.api.SecurityEventList(page, next);
  }

  // -- audit -------------------------------------------------------------------------------------

  @Override
  public RunRecord getRun(
      String runId, boolean includeCode, int waitSeconds, boolean includeNotebookSource) {
    RunRecord r = getRun(runId, includeCode, waitSeconds);
    return includeNotebookSource ? core.audit.withNotebook(r) : r;
  }

  @Override
  public RunRecord rerun(RerunRequest req, RunListener listener) {
    return core.runs.rerun(tenant, req, listener);
  }

  @Override
  public dev.pysandbox.api.RunDiff diffRuns(String runId, String compareTo) {
    RunRecord run = core.storedRuns.get(tenant, runId, true);
    String other = compareTo != null ? compareTo : run.parentRunId();
    if (other == null) {
      throw PysandboxException.invalid(
          "run " + runId + " has no parent run: give compare_to, the run to compare it with");
    }
    if (other.equals(runId)) {
      throw PysandboxException.invalid("compare_to is the run itself: name another run");
    }
    return RunDiffs.diff(run, core.storedRuns.get(tenant, other, true));
  }

  @Override
  public DeleteResult deleteRun(String runId, boolean deleteFiles) {
    RunRecord r = getRun(runId, false);
    return core.review.delete(tenant, r, deleteFiles, "delete_run");
  }

  @Override
  public PurgeResult purgeRuns(int olderThanDays, RunStatus status, boolean dryRun) {
    return core.review.purge(tenant, olderThanDays, status, dryRun);
  }

  @Override
  public SessionExport exportSession(String sessionId, String format) {
    return core.review.export(tenant, sessionId, format);
  }

  // -- sessions ----------------------------------------------------------------------------------

  @Override
  public SessionInfo createSession(
      String sessionId,
      Integer ttlMinutes,
      LimitRequest limits,
      String tier,
      List<String> packages,
      List<String> networkAllow) {
    return core.opener.create(tenant, sessionId, ttlMinutes, limits, tier, packages, networkAllow);
  }

  @Override
  public List<SessionInfo> listSessions(boolean includeEnded) {
    List<SessionInfo> open = core.sessions.list(tenant);
    if (!includeEnded) {
      return open;
    }
    List<SessionInfo> all = new java.util.ArrayList<>(open);
    all.addAll(core.ends.list(tenant));
    return all;
  }

  @Override
  public SessionInfo getSession(String sessionId) {
    Ids.requireSessionId(sessionId);
    return core.sessions.require(new SessionKey(tenant, sessionId)).info();
  }

  @Override
  public List<SessionInfo> listRecordedSessions() {
    return core.store().openSessions(tenant, core.instances::isAlive);
  }

  @Override
  public SessionInfo closeSession(String sessionId) {
    return core.closer.close(tenant, sessionId);
  }

  // -- packages and network ---------------------------------------------------------------------

  @Override
  public dev.pysandbox.api.EnvironmentList listEnvironments() {
    return core.environmentListing.list(Tenants.LOCAL.equals(tenant) ? null : tenant);
  }

  @Override
  public dev.pysandbox.api.EnvironmentCleanResult cleanEnvironments(
      int olderThanDays, boolean dryRun) {
    if (olderThanDays < 0) {
      throw PysandboxException.invalid("older_than_days must be 0 or more, got " + olderThanDays);
    }
    return core.environmentListing.clean(
        Tenants.LOCAL.equals(tenant) ? null : tenant, olderThanDays, dryRun);
  }

  @Override
  public dev.pysandbox.api.DownloadResult downloadFile(
      String sessionId, String url, String filename, Boolean overwrite) {
    core.requireBackend();
    return core.downloads.download(
        tenant, sessionId, url, filename, Boolean.TRUE.equals(overwrite));
  }

  // -- files and context -------------------------------------------------------------------------

  @Override
  public UploadResult uploadFile(UploadRequest req) {
    return core.uploads.upload(tenant, req);
  }

  @Override
  public UploadResult uploadStream(
      String sessionId, String filename, InputStream content, long maxBytes, boolean overwrite) {
    return core.uploads.uploadStream(tenant, sessionId, filename, content, maxBytes, overwrite);
  }

  @Override
  public FileStream openArtifact(String runId, String sessionId, String path) {
    return core.artifacts.open(tenant, runId, sessionId, path);
  }

  @Override
  public ArtifactList listArtifacts(String runId, String sessionId) {
    return core.artifacts.list(tenant, runId, sessionId);
  }

  @Override
  public ArtifactContent readArtifact(
      String runId, String sessionId, String path, long maxSizeBytes) {
    return core.artifacts.read(tenant, runId, sessionId, path, maxSizeBytes);
  }

  @Override
  public ContextSnapshot getContext(String sessionId, List<String> names) {
    return core.context.get(tenant, sessionId, names);
  }

  @Override
  public ContextSnapshot setContext(String sessionId, Map<String, Object> values) {
    return core.context.set(tenant, sessionId, values);
  }

  @Override
  public SessionInfo clearContext(String sessionId) {
    return core.context.clear(tenant, sessionId);
  }

  // -- set-up ------------------------------------------------------------------------------------

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

  /** Into this tenant's trajectory. */
  @Override
  public void recordCall(CallRecord call) {
    core.trajectory.record(tenant, call);
  }

  /** A view owns nothing: the core is closed by its owner (the server's own service). */
  @Override
  public void close() {}

  @Override
  public dev.pysandbox.api.agent.AgentService agents() {
    return core.agents.forTenant(tenant, this);
  }
}

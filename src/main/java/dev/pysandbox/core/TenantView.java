package dev.pysandbox.core;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.DeleteResult;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.EventSink;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PurgeResult;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RerunRequest;
import dev.pysandbox.api.RunEvent;
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
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.Tier;
import dev.pysandbox.packages.Requirement;
import dev.pysandbox.packages.Requirements;
import dev.pysandbox.packages.ScriptMetadata;
import dev.pysandbox.store.SessionKey;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.MDC;

/**
 * The core as one tenant sees it: every call names its tenant to the part whose job it is, so that
 * sessions are looked up by (tenant, id), runs are listed by tenant, and a run or session of
 * another tenant answers exactly as one that does not exist ({@code not_found}, the same message,
 * the same path through the code). Cheap: a view holds no state but its tenant's name.
 */
final class TenantView implements SandboxService {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(TenantView.class);

  private final ServiceWiring core;
  private final String tenant;

  TenantView(ServiceWiring core, String tenant) {
    this.core = core;
    this.tenant = Ids.requireTenant(tenant);
  }

  String tenant() {
    return tenant;
  }

  // -- runs --------------------------------------------------------------------------------------

  /** Runs with the run's id (and its session's) in the logging context of the calling thread. */
  @Override
  public RunRecord run(ExecutionRequest request, RunListener listener) {
    if (request.dryRun()) {
      return dryRun(request);
    }
    return run(request, listener, null, null);
  }

  /** The code's analysis as a run: no sandbox of its own, nothing run, nothing recorded. */
  private RunRecord dryRun(ExecutionRequest request) {
    int timeout = core.validator.validate(request, sessionTier(request));
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

  /**
   * @param parentRunId the run this one re-runs, or null
   * @param oneShotLimits the limits of a one-shot run's sandbox, or null for the server's defaults
   */
  private RunRecord run(
      ExecutionRequest request, RunListener listener, String parentRunId, Limits oneShotLimits) {
    if (request.sessionId() != null) {
      MDC.put("session_id", request.sessionId());
    }
    try {
      return runLogged(request, new LoggedListener(listener), parentRunId, oneShotLimits);
    } finally {
      MDC.remove("run_id");
      MDC.remove("session_id");
    }
  }

  private RunRecord runLogged(
      ExecutionRequest request, RunListener listener, String parentRunId, Limits oneShotLimits) {
    int timeout = core.validator.validate(request, sessionTier(request));
    Tier tier = core.validator.tier(request.tier());
    core.requireBackend();
    Approvals.Verdict verdict = core.approvals.verdict(request);
    if (verdict != null && verdict.mustWait()) {
      return core.approvals.hold(
          tenant,
          request,
          timeout,
          verdict,
          parentRunId,
          oneShotLimits,
          // A session's run takes the session's tier: only a tier the call named is kept.
          request.sessionId() != null ? request.tier() : tier.name(),
          listener);
    }
    List<dev.pysandbox.api.RiskFinding> findings = verdict == null ? List.of() : verdict.findings();
    return execute(
        request.sessionId(),
        request.code(),
        timeout,
        oneShotLimits,
        tier,
        request.tier(),
        wanted(request.packages(), request.code()),
        listener,
        (s, env) ->
            core.runs.begin(
                tenant,
                request,
                timeout,
                s,
                listener,
                parentRunId,
                findings,
                s != null ? s.tier.name() : tier.name(),
                env));
  }

  /**
   * Runs a run that waited for approval, now approved: in its session (made if it never was) or a
   * fresh sandbox with the limits it was held with. A run whose session ended while it waited is
   * recorded failed, never run.
   */
  RunRecord runApproved(RunRecord stored, RunListener listener) {
    if (stored.sessionId() != null) {
      MDC.put("session_id", stored.sessionId());
    }
    try {
      core.requireBackend();
      RunListener logged = new LoggedListener(listener);
      Limits limits =
          stored.sessionId() != null || stored.limits().isEmpty()
              ? null
              : core.validator.limits(LimitRequest.of(stored.limits()));
      Tier tier = core.validator.tier(stored.tier());
      return execute(
          stored.sessionId(),
          stored.code(),
          stored.timeoutSeconds(),
          limits,
          tier,
          stored.sessionId() == null ? null : stored.tier(),
          wanted(stored.packages(), stored.code()),
          logged,
          (s, env) -> {
            RunRecord.Builder b = core.runs.beginApproved(tenant, stored, s, logged);
            Environments.Ready e = s != null ? s.env : env;
            if (e != null) {
              b.packages(e.requirements())
                  .environment(e.key())
                  .pipFreeze(e.pipFreeze())
                  .envHash(e.envHash());
            }
            return b;
          });
    } catch (SessionEnds.Ended e) {
      // Its session ended while it waited: in a new, empty one it could only fail, so it never
      // runs.
      RunRecord failed =
          stored.toBuilder()
              .status(RunStatus.FAILED)
              .message("approved, but not run: " + e.getMessage())
              .finishedAt(core.time.instant().toString())
              .build();
      if (core.store().finish(failed)) {
        core.audit.finished(stored.runId());
      }
      return core.storedRun(tenant, stored.runId());
    } finally {
      MDC.remove("run_id");
      MDC.remove("session_id");
    }
  }

  /** Makes a run's record once its session (or none) is known: a new run, or one that waited. */
  @FunctionalInterface
  private interface Beginner {
    /**
     * @param session the run's session, or null
     * @param env a one-shot run's package environment, or null
     */
    RunRecord.Builder begin(Session session, Environments.Ready env);
  }

  /**
   * The tier of the open session a call names without naming a tier (its default timeout applies),
   * or null: the call's own tier, or the default one, which a session it creates gets.
   */
  private Tier sessionTier(ExecutionRequest request) {
    if (request.sessionId() == null || request.tier() != null) {
      return null;
    }
    Session s = core.sessions.find(new SessionKey(tenant, request.sessionId()));
    return s == null ? null : s.tier;
  }

  /**
   * The packages a call asks for: its own and its code's PEP 723 {@code # /// script} dependencies,
   * as canonical requirements (empty for none).
   */
  private static List<Requirement> wanted(List<String> packages, String code) {
    List<Requirement> own = Requirements.parse(packages);
    List<Requirement> inline = Requirements.parse(ScriptMetadata.dependencies(code));
    return Requirements.merge(own, inline);
  }

  /** The environment for these requirements, built first if need be; null for none. */
  private Environments.Ready environment(List<Requirement> wanted, RunListener progress) {
    if (wanted.isEmpty()) {
      return null;
    }
    return core.environments.ensure(
        wanted,
        tenant,
        line -> {
          log.debug("environment build: {}", line);
          progress.preparing(line);
        });
  }

  /**
   * A new session's environment, its use and, in an egress tier, its way out ({@code network_allow}
   * or {@code narrowed}).
   */
  private SessionManager.Extras extras(
      List<Requirement> wanted,
      Tier tier,
      String sessionId,
      dev.pysandbox.egress.EgressPolicy narrowed,
      RunListener progress) {
    Environments.Ready env = environment(wanted, progress);
    return new SessionManager.Extras(
        env,
        Tier.NETWORK_EGRESS.equals(tier.network())
            ? core.egress.forSession(tenant, sessionId, narrowed, runningIn(sessionId))
            : null,
        env == null ? null : core.environments.use(env));
  }

  /** The run a session is running now, asked when a network attempt of its sandbox ends. */
  private java.util.function.Supplier<String> runningIn(String sessionId) {
    SessionKey key = new SessionKey(tenant, sessionId);
    return () -> {
      Session s = core.sessions.find(key);
      return s == null ? null : s.runningRunId();
    };
  }

  /**
   * Opens the session (a new one with the extras it needs), or finds it as it is. An id whose
   * session ended within the retention is not made again (unless {@code explicit}: create_session);
   * a creation that fails is recorded, so that the next call does not make it without its packages.
   */
  private Session openSession(
      String sessionId,
      Integer ttl,
      Limits limits,
      Tier tier,
      List<Requirement> wanted,
      dev.pysandbox.egress.EgressPolicy narrowed,
      RunListener progress,
      boolean explicit) {
    SessionKey key = new SessionKey(tenant, sessionId);
    Session s = core.sessions.find(key);
    if (s != null) {
      return s;
    }
    List<String> packages = wanted.stream().map(Requirement::canonical).toList();
    core.sessions.requireCreatable(key, tier, packages, explicit);
    SessionManager.Extras extras;
    try {
      extras = extras(wanted, tier, sessionId, narrowed, progress);
    } catch (PysandboxException e) {
      core.ends.creationFailed(
          key, ttl == null ? core.config.sessionTtlMinutes() : ttl, tier.name(), packages, e);
      throw e;
    }
    return core.sessions.open(key, ttl, limits, tier, extras, explicit);
  }

  /** A session's packages are its own for its whole life: a call asking for others is refused. */
  private static void requirePackages(Session s, List<Requirement> wanted) {
    List<String> has = s.env == null ? List.of() : s.env.requirements();
    List<String> missing =
        wanted.stream().map(Requirement::canonical).filter(r -> !has.contains(r)).toList();
    if (!missing.isEmpty()) {
      throw PysandboxException.invalid(
          "session '"
              + s.id
              + "' has packages "
              + has
              + ", fixed when it was created, and this call asks for "
              + missing
              + ": create another session with every package it needs (create_session"
              + " packages), or run without session_id");
    }
  }

  /**
   * @param tier the tier of a one-shot run's sandbox, and of a session this call opens
   * @param requestedTier the tier the call named, or null: a session of another tier refuses it
   */
  private RunRecord execute(
      String sessionId,
      String code,
      int timeout,
      Limits oneShotLimits,
      Tier tier,
      String requestedTier,
      List<Requirement> wanted,
      RunListener progress,
      Beginner beginner) {
    RunExecutor runs = core.runs;
    if (sessionId != null) {
      // A session made by this call (run_python on a new session_id) gets the request's tier.
      Session s = openSession(sessionId, null, tier.limits(), tier, wanted, null, progress, false);
      requireSameTier(s, requestedTier);
      requirePackages(s, wanted);
      String[] began = new String[1];
      try {
        return core.sessions.with(
            s,
            sandbox -> {
              RunRecord.Builder run = beginner.begin(s, null);
              began[0] = run.build().runId();
              return runs.inSession(run, s, sandbox, code, timeout, core.sessions);
            });
      } finally {
        if (began[0] != null) {
          // Once the session's lock is released: whoever is told the run ended finds it free.
          runs.release(began[0]);
        }
      }
    }
    Environments.Ready env = environment(wanted, progress);
    RunRecord.Builder run = beginner.begin(null, env);
    SandboxSpec spec = core.specs.of(tier, oneShotLimits == null ? tier.limits() : oneShotLimits);
    if (env != null) {
      spec = spec.withEnvironment(env.mount());
    }
    if (Tier.NETWORK_EGRESS.equals(tier.network())) {
      String runId = run.build().runId();
      spec = spec.withEgress(core.egress.forSession(tenant, null, null, () -> runId));
    }
    Sandbox sandbox;
    AutoCloseable use = null;
    try {
      if (env != null && spec.egress() == null) {
        // Not the pool's kind: a spare of this environment, started after the last such run.
        SpareSandboxes.Started taken = core.spares.take(spec, () -> core.environments.use(env));
        sandbox = taken.sandbox();
        use = taken.held();
      } else {
        use = env == null ? null : core.environments.use(env);
        try {
          sandbox = core.pool.take(spec);
        } catch (PysandboxException e) {
          close(use);
          throw e;
        }
        AutoCloseable held = use;
        if (held != null) {
          sandbox.exited().whenComplete((x, err) -> close(held));
        }
      }
    } catch (PysandboxException e) {
      runs.fail(run, "no sandbox could be started: " + e.getMessage());
      throw e;
    }
    try {
      return runs.oneShot(run, sandbox, code, timeout);
    } finally {
      // The run is over and its sandbox on its way out: the environment is no longer in use.
      close(use);
    }
  }

  private static void close(AutoCloseable use) {
    dev.pysandbox.util.Closeables.quietly(use, log);
  }

  /** A session's tier is its own for its whole life: a call naming another is refused. */
  private static void requireSameTier(Session s, String requested) {
    if (requested != null && !requested.equals(s.tier.name())) {
      throw PysandboxException.invalid(
          "session '"
              + s.id
              + "' has tier '"
              + s.tier.name()
              + "', not '"
              + requested
              + "': the session's tier is "
              + s.tier.name()
              + " for its whole life; leave tier out, or use another session");
    }
  }

  /** Puts the run's id in the logging context when it starts; passes everything on. */
  private record LoggedListener(RunListener listener) implements RunListener {
    @Override
    public void started(String runId) {
      MDC.put("run_id", runId);
      listener.started(runId);
    }

    @Override
    public boolean wantsEvents() {
      return listener.wantsEvents();
    }

    @Override
    public void event(RunEvent event) {
      listener.event(event);
    }

    @Override
    public dev.pysandbox.api.ApprovalDecision askApproval(dev.pysandbox.api.Approval approval) {
      return listener.askApproval(approval);
    }

    @Override
    public void preparing(String line) {
      listener.preparing(line);
    }
  }

  @Override
  public RunRecord start(ExecutionRequest request, RunListener listener) {
    if (request.dryRun()) {
      return dryRun(request); // answered at once: there is nothing to wait for
    }
    // What needs no sandbox is refused here, on the caller's thread, as a waiting run's is.
    core.validator.validate(request);
    core.requireBackend();
    return core.started.start(listener, l -> run(request, l));
  }

  @Override
  public Subscription attach(String runId, long afterSeq, EventSink sink) {
    Ids.requireRunId(runId);
    return core.live.attach(tenant, runId, afterSeq, sink, core::storedRun);
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
      core.runs.awaitEnd(runId, deadline);
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
    Ids.requireRunId(runId);
    CancelResult r = core.runs.cancel(tenant, runId, reason, core.sessions);
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
    return core.storedRun(tenant, runId, includeCode);
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
    return core.approvals.decide(
        tenant, approvalId, approve, decidedBy, via, reason, RunListener.NONE, false);
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
    RunRecord original = core.storedRun(tenant, req.runId(), true);
    if (original.code() == null || original.code().isBlank()) {
      throw PysandboxException.invalid("run " + req.runId() + " has no code to run again");
    }
    // A one-shot re-run gets the original's tier (if the server still allows it); in a session, the
    // session's.
    ExecutionRequest request =
        new ExecutionRequest(
            req.code() != null ? req.code() : original.code(),
            req.sessionId(),
            req.description() != null ? req.description() : original.description(),
            req.timeoutSeconds() != null ? req.timeoutSeconds() : original.timeoutSeconds(),
            req.sessionId() == null ? original.tier() : null,
            null,
            false,
            req.packages() != null ? req.packages() : original.packages());
    Limits limits = null;
    if (req.sessionId() == null) {
      core.validator.validate(request);
      limits = core.validator.limits(LimitRequest.of(original.limits()));
    }
    return run(request, listener, original.runId(), limits);
  }

  @Override
  public dev.pysandbox.api.RunDiff diffRuns(String runId, String compareTo) {
    RunRecord run = core.storedRun(tenant, runId, true);
    String other = compareTo != null ? compareTo : run.parentRunId();
    if (other == null) {
      throw PysandboxException.invalid(
          "run " + runId + " has no parent run: give compare_to, the run to compare it with");
    }
    if (other.equals(runId)) {
      throw PysandboxException.invalid("compare_to is the run itself: name another run");
    }
    return RunDiffs.diff(run, core.storedRun(tenant, other, true));
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
    String id = sessionId == null ? Ids.newSessionId() : Ids.requireSessionId(sessionId);
    RequestValidator.ttlMinutes(ttlMinutes);
    Tier t = core.validator.tier(tier == null ? null : Ids.requireTier(tier));
    Limits wanted = core.validator.limits(limits, t.limits());
    List<Requirement> reqs = Requirements.parse(packages);
    dev.pysandbox.egress.EgressPolicy narrowed = null;
    if (networkAllow != null) {
      if (!Tier.NETWORK_EGRESS.equals(t.network())) {
        throw PysandboxException.invalid(
            "network_allow is for a tier with network (such as 'network'); tier '"
                + t.name()
                + "' has none");
      }
      narrowed = core.egress.narrow(networkAllow);
    }
    core.requireBackend();
    if (narrowed != null && core.sessions.find(new SessionKey(tenant, id)) != null) {
      throw PysandboxException.invalid(
          "session '" + id + "' exists already: its network_allow was fixed when it was created");
    }
    if (core.sessions.find(new SessionKey(tenant, id)) == null) {
      requireApprovedBuild(id, reqs);
    }
    Session s = openSession(id, ttlMinutes, wanted, t, reqs, narrowed, RunListener.NONE, true);
    requireSameTier(s, tier);
    requirePackages(s, reqs);
    core.sessions.ready(s);
    return s.info();
  }

  /**
   * Building packages runs code the caller chose (an sdist's {@code setup.py}, with a way to the
   * index): under {@code approval_policy=always} create_session may not build them, since it has no
   * run to hold (issue 24 item 2: it did, while run_python with the same packages waited). An
   * environment already built (by an approved run, or the operator) runs nothing and is used.
   */
  private void requireApprovedBuild(String sessionId, List<Requirement> reqs) {
    if (reqs.isEmpty() || !core.config.approvalPolicy().equals("always")) {
      return;
    }
    if (core.environments.find(core.environments.key(reqs)).isPresent()) {
      return;
    }
    throw new PysandboxException(
        ErrorCode.APPROVAL_REQUIRED,
        "session '"
            + sessionId
            + "' would build packages "
            + reqs.stream().map(Requirement::canonical).toList()
            + " (their build runs code), and the server's approval_policy is always: a person"
            + " approves that first. Call run_python with these packages and session_id (the run"
            + " waits for approval, and its session gets them), or have the environment built"
            + " first; an environment already built is used without approval");
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
    return core.environmentList(Tenants.LOCAL.equals(tenant) ? null : tenant);
  }

  @Override
  public dev.pysandbox.api.EnvironmentCleanResult cleanEnvironments(
      int olderThanDays, boolean dryRun) {
    if (olderThanDays < 0) {
      throw PysandboxException.invalid("older_than_days must be 0 or more, got " + olderThanDays);
    }
    return core.cleanEnvironments(
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

  /** A view owns nothing: the core is closed by its owner ({@link DefaultSandboxService}). */
  @Override
  public void close() {}
}

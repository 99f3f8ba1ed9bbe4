package dev.pysandbox.core.runs;

import dev.pysandbox.api.ApprovalDecision;
import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RerunRequest;
import dev.pysandbox.api.RiskFinding;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.Tier;
import dev.pysandbox.core.approvals.ApprovalPolicy;
import dev.pysandbox.core.approvals.Approvals;
import dev.pysandbox.core.audit.AuditTrail;
import dev.pysandbox.core.environments.RunEnvironments;
import dev.pysandbox.core.requests.RequestValidator;
import dev.pysandbox.core.sandboxes.BackendGate;
import dev.pysandbox.core.sessions.SessionEnds;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.TimeSource;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A run from its request to its record, by one flow: validated, its id chosen (once: a run held for
 * approval keeps it when it runs), held when {@link ApprovalPolicy} says it waits for a person, and
 * otherwise planned ({@link RunPlan}) and run in its place, a fresh sandbox ({@link OneShotRun}) or
 * its session's ({@link SessionRun}). A run approved later takes the same flow from its held
 * record. The run's id (and its session's) is in the logging context of the thread that runs it.
 */
public final class Runs {
  private static final Logger log = LoggerFactory.getLogger(Runs.class);

  private final RequestValidator validator;
  private final SandboxBackend backend;
  private final ApprovalPolicy policy;
  private final Approvals approvals;
  private final SessionOpener opener;
  private final StoredRuns stored;
  private final StartedRuns started;
  private final InFlightRuns inFlight;
  private final RunPlace oneShot;
  private final RunPlace inSession;
  private final Supplier<RunStore> store;
  private final TimeSource time;
  // Approved runs being started here. A run approved at its caller's prompt is claimed before the
  // decision is stored, so that the once-a-second look for approved runs (ApprovedRuns) cannot
  // start it first and leave the caller, who waits for its end, with a run still going.
  private final Set<String> starting = ConcurrentHashMap.newKeySet();
  private final AuditTrail audit;

  public Runs(
      RequestValidator validator,
      SandboxBackend backend,
      ApprovalPolicy policy,
      Approvals approvals,
      SessionOpener opener,
      StoredRuns stored,
      StartedRuns started,
      InFlightRuns inFlight,
      RunPlace oneShot,
      RunPlace inSession,
      Supplier<RunStore> store,
      TimeSource time,
      AuditTrail audit) {
    this.validator = validator;
    this.backend = backend;
    this.policy = policy;
    this.approvals = approvals;
    this.opener = opener;
    this.stored = stored;
    this.started = started;
    this.inFlight = inFlight;
    this.oneShot = oneShot;
    this.inSession = inSession;
    this.store = store;
    this.time = time;
    this.audit = audit;
  }

  /** Runs the request and answers when it has ended (or is held for approval). */
  public RunRecord run(String tenant, ExecutionRequest request, RunListener listener) {
    return run(tenant, request, listener, null, null);
  }

  /**
   * Runs the request on one of the core's threads, answering as soon as it is recorded (see {@link
   * StartedRuns}). What needs no sandbox is refused here, on the caller's thread.
   */
  public RunRecord start(String tenant, ExecutionRequest request, RunListener listener) {
    validator.validate(request);
    BackendGate.require(backend);
    return started.start(listener, l -> run(tenant, request, l));
  }

  /**
   * Runs a recorded run's code again (or other code in its place), as a child of it: a one-shot
   * re-run gets the original's tier (if the server still allows it) and limits; in a session, the
   * session's.
   */
  public RunRecord rerun(String tenant, RerunRequest req, RunListener listener) {
    RunRecord original = stored.get(tenant, req.runId(), true);
    if (original.code() == null || original.code().isBlank()) {
      throw PysandboxException.invalid("run " + req.runId() + " has no code to run again");
    }
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
      validator.validate(request);
      limits = validator.limits(LimitRequest.of(original.limits()));
    }
    return run(tenant, request, listener, original.runId(), limits);
  }

  /**
   * @return null when the tenant has no such run running here
   */
  public CancelResult cancel(String tenant, String runId, String reason) {
    Ids.requireRunId(runId);
    return inFlight.cancel(tenant, runId, reason);
  }

  /**
   * @param parentRunId the run this one re-runs, or null
   * @param oneShotLimits the limits of a one-shot run's sandbox, or null for the server's defaults
   */
  private RunRecord run(
      String tenant,
      ExecutionRequest request,
      RunListener listener,
      String parentRunId,
      Limits oneShotLimits) {
    if (request.sessionId() != null) {
      MDC.put("session_id", request.sessionId());
    }
    try {
      return requested(tenant, request, new LoggedListener(listener), parentRunId, oneShotLimits);
    } finally {
      MDC.remove("run_id");
      MDC.remove("session_id");
    }
  }

  private RunRecord requested(
      String tenant,
      ExecutionRequest request,
      RunListener listener,
      String parentRunId,
      Limits oneShotLimits) {
    int timeout =
        validator.validate(request, opener.tierOf(tenant, request.sessionId(), request.tier()));
    Tier tier = validator.tier(request.tier());
    BackendGate.require(backend);
    String runId = Ids.newRunId();
    ApprovalPolicy.Verdict verdict = policy.verdict(request);
    if (verdict != null && verdict.mustWait()) {
      // A session's run takes the session's tier: only a tier the call named is kept.
      String heldTier = request.sessionId() != null ? request.tier() : tier.name();
      Approvals.Held held =
          approvals.hold(
              runId,
              tenant,
              request,
              timeout,
              verdict,
              parentRunId,
              oneShotLimits,
              heldTier,
              listener);
      return decidedAtOnce(tenant, runId, held, listener);
    }
    List<RiskFinding> findings = verdict == null ? List.of() : verdict.findings();
    RunPlan plan =
        new RunPlan(
            runId,
            tenant,
            request.sessionId(),
            request.code(),
            timeout,
            tier,
            request.tier(),
            oneShotLimits,
            RunEnvironments.wanted(request.packages(), request.code()),
            new RunPlan.Fresh(request, parentRunId, findings));
    return placeOf(plan).run(plan, listener);
  }

  /**
   * A held run whose caller's prompt decided it at once: approved, it runs now on this thread, and
   * its end is returned; otherwise (or when a decision elsewhere came first) the run as it stands.
   */
  private RunRecord decidedAtOnce(
      String tenant, String runId, Approvals.Held held, RunListener listener) {
    ApprovalDecision d = held.decision();
    if (d != null && starting.add(runId)) {
      try {
        approvals.decide(tenant, held.approvalId(), d, "elicitation");
        if (d.approved()) {
          return startApproved(tenant, approvals.withCode(runId), listener);
        }
      } catch (PysandboxException e) {
        // Decided elsewhere first (or expired): the run is as that decision left it.
        log.info(
            "the prompt's decision on {} came too late: {}", held.approvalId(), e.getMessage());
      } finally {
        starting.remove(runId);
      }
    }
    return approvals.stored(runId);
  }

  /**
   * Runs a run that waited for approval, now approved, unless it is being started here already
   * (then the run as it stands).
   */
  RunRecord runApproved(String tenant, RunRecord held, RunListener listener) {
    if (!starting.add(held.runId())) {
      return stored.get(tenant, held.runId());
    }
    try {
      return startApproved(tenant, held, listener);
    } finally {
      starting.remove(held.runId());
    }
  }

  /**
   * Runs a run that waited for approval, now approved: in its session (made if it never was) or a
   * fresh sandbox with the limits it was held with. A run whose session ended while it waited is
   * recorded failed, never run.
   */
  private RunRecord startApproved(String tenant, RunRecord held, RunListener listener) {
    if (held.sessionId() != null) {
      MDC.put("session_id", held.sessionId());
    }
    try {
      BackendGate.require(backend);
      Limits limits =
          held.sessionId() != null || held.limits().isEmpty()
              ? null
              : validator.limits(LimitRequest.of(held.limits()));
      RunPlan plan =
          new RunPlan(
              held.runId(),
              tenant,
              held.sessionId(),
              held.code(),
              held.timeoutSeconds(),
              validator.tier(held.tier()),
              held.sessionId() == null ? null : held.tier(),
              limits,
              RunEnvironments.wanted(held.packages(), held.code()),
              new RunPlan.Approved(held));
      return placeOf(plan).run(plan, new LoggedListener(listener));
    } catch (SessionEnds.Ended e) {
      // Its session ended while it waited: in a new, empty one it could only fail, so it never
      // runs.
      RunRecord failed =
          held.toBuilder()
              .status(RunStatus.FAILED)
              .message("approved, but not run: " + e.getMessage())
              .finishedAt(time.instant().toString())
              .build();
      if (store.get().finish(failed)) {
        audit.finished(held.runId());
      }
      return stored.get(tenant, held.runId());
    } finally {
      MDC.remove("run_id");
      MDC.remove("session_id");
    }
  }

  private RunPlace placeOf(RunPlan plan) {
    return plan.sessionId() == null ? oneShot : inSession;
  }

  /** Puts the run's id in the logging context when it starts; passes everything on. */
  private record LoggedListener(RunListener listener) implements RelayListener {
    @Override
    public void started(String runId) {
      MDC.put("run_id", runId);
      listener.started(runId);
    }

    @Override
    public ApprovalDecision askApproval(dev.pysandbox.api.Approval approval) {
      return listener.askApproval(approval);
    }

    @Override
    public void preparing(String line) {
      listener.preparing(line);
    }
  }
}

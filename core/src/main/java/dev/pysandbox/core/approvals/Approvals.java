package dev.pysandbox.core.approvals;

import dev.pysandbox.api.Approval;
import dev.pysandbox.api.ApprovalDecision;
import dev.pysandbox.api.ApprovalList;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.audit.FinalRecords;
import dev.pysandbox.core.audit.Provenance;
import dev.pysandbox.core.audit.SecurityEventLog;
import dev.pysandbox.core.requests.RequestIds;
import dev.pysandbox.store.HeldApproval;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.Sha256;
import dev.pysandbox.util.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The records of runs held for a person's decision (which runs wait is {@link ApprovalPolicy}'s). A
 * waiting run is recorded {@code awaiting_approval} with its findings and a pending approval;
 * nothing executes. The decision comes from a person: the face's own prompt (MCP elicitation, on
 * the caller's thread), the command line or an approver's key over REST, all of them one
 * conditional write so that exactly one decision wins. What runs once approved, and where, is the
 * run path's (an approved run runs as any other); an approval not decided within {@code
 * approval_ttl} expires and its run never runs.
 */
public final class Approvals {
  private static final Logger log = LoggerFactory.getLogger(Approvals.class);

  /** The most pending approvals a list shows. */
  static final int MAX_LISTED = 1000;

  private final PysandboxConfig config;
  private final Supplier<RunStore> store;
  private final TimeSource time;
  private final SecurityEventLog events;
  private final String instanceId;
  private final Predicate<String> instanceAlive;
  private final String backendName;
  private final Supplier<Provenance> provenance;
  private final Consumer<RunRecord> finished;

  public Approvals(
      PysandboxConfig config,
      Supplier<RunStore> store,
      TimeSource time,
      SecurityEventLog events,
      String instanceId,
      Predicate<String> instanceAlive,
      String backendName,
      Supplier<Provenance> provenance,
      Consumer<RunRecord> finished) {
    this.config = config;
    this.store = store;
    this.time = time;
    this.events = events;
    this.instanceId = instanceId;
    this.instanceAlive = instanceAlive;
    this.backendName = backendName;
    this.provenance = provenance;
    this.finished = finished;
  }

  /**
   * A run recorded as held, and the decision its caller's prompt gave at once, if any.
   *
   * @param decision null when the prompt gave none (or there was no prompt)
   */
  public record Held(String approvalId, ApprovalDecision decision) {}

  // -- before a run ------------------------------------------------------------------------------

  /**
   * Records the run as {@code awaiting_approval} with a pending approval, tells the listener it is
   * recorded, and asks it for a decision (which the run path then decides, and runs if approved).
   *
   * @param runId the run's id, chosen as its request came in; it keeps it when it runs
   * @param oneShotLimits the sandbox limits a one-shot run will get, or null for the defaults
   * @param tier the tier it runs in once approved, or null for its session's
   */
  public Held hold(
      String runId,
      String tenant,
      ExecutionRequest request,
      int timeoutSeconds,
      ApprovalPolicy.Verdict verdict,
      String parentRunId,
      Limits oneShotLimits,
      String tier,
      RunListener listener) {
    String approvalId = Ids.newApprovalId();
    Instant now = time.instant();
    Instant expires = now.plus(Duration.ofMinutes(config.approvalTtlMinutes()));
    RunRecord run =
        provenance
            .get()
            .applyTo(RunRecord.builder())
            .tenant(tenant)
            .requestId(RequestIds.current())
            .runId(runId)
            .sessionId(request.sessionId())
            .parentRunId(parentRunId)
            .description(request.description())
            .status(RunStatus.AWAITING_APPROVAL)
            .message(heldMessage(runId, approvalId, expires, verdict.why()))
            .code(request.code())
            .codeHash(Sha256.hex(request.code()))
            .timeoutSeconds(timeoutSeconds)
            .backend(backendName)
            .createdAt(now.toString())
            .limits(oneShotLimits == null ? Map.of() : oneShotLimits.describe())
            .riskFindings(verdict.findings())
            .approvalId(approvalId)
            .tier(tier)
            // The packages asked for, so that the approved run gets them (its environment is
            // built when it runs).
            .packages(
                dev.pysandbox.packages.Requirements.parse(request.packages()).stream()
                    .map(dev.pysandbox.packages.Requirement::canonical)
                    .toList())
            .viewCommand("pysandbox approvals show " + approvalId)
            .build();
    Approval approval =
        new Approval(
            approvalId,
            runId,
            tenant,
            request.sessionId(),
            Approval.PENDING,
            verdict.why(),
            null,
            verdict.findings(),
            now.toString(),
            expires.toString(),
            null,
            null,
            null,
            null);
    store.get().insertAwaiting(run, approval, instanceId);
    Map<String, Object> detail = new LinkedHashMap<>();
    detail.put("approval_id", approvalId);
    detail.put("why", verdict.why());
    detail.put("expires_at", expires.toString());
    events.record(
        tenant, SecurityEvent.Kind.APPROVAL_REQUESTED, request.sessionId(), runId, detail);
    log.info("run {} waits for approval {}: {}", runId, approvalId, verdict.why());
    try {
      listener.started(runId);
    } catch (RuntimeException e) {
      log.warn("a run listener failed for {}: {}", runId, e.toString());
    }
    ApprovalDecision decision = null;
    try {
      decision = listener.askApproval(approval.withCode(request.code()));
    } catch (RuntimeException e) {
      log.warn("asking for the approval of {} failed: {}", runId, e.toString());
    }
    return new Held(approvalId, decision);
  }

  /**
   * What a held run's caller reads (issue 23: it was null): why it waits, who may decide it and
   * how, and how to wait for the outcome.
   */
  private String heldMessage(String runId, String approvalId, Instant expires, String why) {
    return "waiting for a person's approval "
        + approvalId
        + " ("
        + why
        + "); nothing runs until then. A person decides it at this client's approval prompt if it"
        + " shows one (stdio clients; over HTTP only where the server allows"
        + " http_elicitation_approves), on the server's host with `pysandbox approvals approve "
        + approvalId
        + "` (or `deny`), or over REST with an approver's key: POST /api/v1/approvals/"
        + approvalId
        + "/approve"
        + (config.agentMayApprove() ? " (this server also lets agents decide: approve_run)" : "")
        + ". Wait for the outcome with get_run (run_id "
        + runId
        + ", wait_seconds up to 60); unless approved it expires at "
        + expires
        + " and never runs.";
  }

  // -- deciding ----------------------------------------------------------------------------------

  /**
   * Decides a pending approval.
   *
   * @param tenant the caller's tenant (another tenant's approval answers {@code not_found}), or
   *     null for the host's operator (the command line)
   * @param decision the answer, who gave it and why (the one value a prompt, the command line and
   *     the REST API all hand over)
   * @param via {@code cli}, {@code rest}, {@code elicitation} or {@code agent}
   * @return the approval as it was held (pending), with the server holding it; a denied run is
   *     ended here, an approved one is the run path's to start
   * @throws PysandboxException {@code not_found} for an unknown approval, {@code approval_expired}
   *     when its time ran out, {@code invalid_argument} when it was decided already
   */
  public HeldApproval decide(
      String tenant, String approvalId, ApprovalDecision decision, String via) {
    boolean approve = decision.approved();
    String decidedBy = decision.decidedBy();
    String reason = decision.reason();
    HeldApproval held = require(tenant, approvalId);
    Approval a = held.approval();
    Instant now = time.instant();
    String state = approve ? Approval.APPROVED : Approval.DENIED;
    String cleanReason = reason == null || reason.isBlank() ? null : limit(reason, 2000);
    if (!store.get().decide(approvalId, state, decidedBy, via, cleanReason, now)) {
      Approval current = require(tenant, approvalId).approval();
      if (current.state().equals(Approval.PENDING) || current.state().equals(Approval.EXPIRED)) {
        expireDue();
        throw new PysandboxException(
            ErrorCode.APPROVAL_EXPIRED,
            "approval "
                + approvalId
                + " expired at "
                + current.expiresAt()
                + "; its run "
                + current.runId()
                + " never ran (run the code again to ask anew)");
      }
      throw PysandboxException.invalid(
          "approval "
              + approvalId
              + " was already "
              + current.state()
              + (current.decidedBy() == null ? "" : " by " + current.decidedBy())
              + " at "
              + current.decidedAt()
              + ": an approval is used once");
    }
    Map<String, Object> detail = new LinkedHashMap<>();
    detail.put("approval_id", approvalId);
    detail.put("decided_by", decidedBy);
    detail.put("via", via);
    if (cleanReason != null) {
      detail.put("reason", cleanReason);
    }
    events.record(
        a.tenant(),
        approve ? SecurityEvent.Kind.APPROVAL_APPROVED : SecurityEvent.Kind.APPROVAL_DENIED,
        a.sessionId(),
        a.runId(),
        detail);
    log.info("approval {} of run {} {} by {} ({})", approvalId, a.runId(), state, decidedBy, via);
    if (!approve) {
      end(
          a.runId(),
          RunStatus.DENIED,
          "denied by " + decidedBy + (cleanReason == null ? "" : ": " + cleanReason));
    }
    return held;
  }

  private static String limit(String text, int max) {
    return text.length() <= max ? text : text.substring(0, max);
  }

  /** An approval of the tenant's (any tenant's when null), or {@code not_found}. */
  private HeldApproval require(String tenant, String approvalId) {
    Ids.requireApprovalId(approvalId);
    return store
        .get()
        .approval(approvalId)
        .filter(h -> tenant == null || tenant.equals(h.approval().tenant()))
        .orElseThrow(
            () ->
                new PysandboxException(
                    ErrorCode.NOT_FOUND, "no approval with id '" + approvalId + "'"));
  }

  /** One approval with its run's code. */
  public Approval show(String tenant, String approvalId) {
    Approval a = require(tenant, approvalId).approval();
    String code = store.get().get(a.runId(), true).map(RunRecord::code).orElse(null);
    return a.withCode(code);
  }

  /** Pending approvals, oldest first: the tenant's, or every tenant's when null. */
  public ApprovalList pending(String tenant) {
    expireDue();
    return new ApprovalList(store.get().approvals(tenant, Approval.PENDING, MAX_LISTED));
  }

  // -- the holder's work -------------------------------------------------------------------------

  /**
   * Expires what is due, and lists the approved runs this server is to start now: its own, and
   * those of a dead server, which it adopts.
   */
  public List<Approval> toStart() {
    expireDue();
    List<Approval> out = new java.util.ArrayList<>();
    for (HeldApproval h : store.get().approvedWaiting()) {
      String holder = h.instanceId();
      if (!holder.equals(instanceId)) {
        if (instanceAlive.test(holder)
            || !store.get().claimApproval(h.approval().approvalId(), holder, instanceId)) {
          continue;
        }
        log.info(
            "adopted approved run {} of a server that is gone ({})", h.approval().runId(), holder);
      }
      out.add(h.approval());
    }
    return out;
  }

  void expireDue() {
    for (Approval a : store.get().expireApprovals(time.instant())) {
      end(
          a.runId(),
          RunStatus.EXPIRED,
          "approval " + a.approvalId() + " was not decided before " + a.expiresAt());
      events.record(
          a.tenant(),
          SecurityEvent.Kind.APPROVAL_EXPIRED,
          a.sessionId(),
          a.runId(),
          Map.of("approval_id", a.approvalId(), "expired_at", a.expiresAt()));
    }
  }

  /** A held run with its code, as it was recorded; {@code not_found} when it is gone. */
  public RunRecord withCode(String runId) {
    return store
        .get()
        .get(runId, true)
        .orElseThrow(
            () -> new PysandboxException(ErrorCode.NOT_FOUND, "run " + runId + " is gone"));
  }

  /** Ends a run that never ran ({@code denied}, {@code expired}). */
  private void end(String runId, RunStatus status, String message) {
    store
        .get()
        .get(runId, true)
        .ifPresent(
            r -> {
              RunRecord ended =
                  r.toBuilder()
                      .status(status)
                      .message(message)
                      .finishedAt(time.instant().toString())
                      .build();
              if (store.get().finish(ended)) {
                finished.accept(ended);
              }
            });
  }

  /** A run as it stands (without its code), with the command that shows it. */
  public RunRecord stored(String runId) {
    return store
        .get()
        .get(runId, false)
        .map(r -> r.toBuilder().viewCommand(FinalRecords.viewCommand(runId)).build())
        .orElseThrow(
            () -> new PysandboxException(ErrorCode.NOT_FOUND, "run " + runId + " is gone"));
  }
}

package dev.pysandbox.api;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.util.List;

/**
 * A run held for a person's decision: what it is, why it waits, and, once decided, who decided,
 * when, through what and why. Single use: {@code pending}, then {@code approved}, {@code denied} or
 * {@code expired}, never back.
 *
 * @param approvalId {@code apr_} and 16 hex digits
 * @param runId the run that waits (its status is {@code awaiting_approval} until then)
 * @param tenant the tenant it belongs to; never on the wire
 * @param sessionId the session it runs in once approved, or null for a fresh sandbox
 * @param state {@code pending}, {@code approved}, {@code denied} or {@code expired}
 * @param why why it waits (the findings at or above the threshold, or the policy)
 * @param code the code that would run (only where asked for: {@code show}, the decision's prompt)
 * @param riskFindings the analysis' findings
 * @param requestedAt ISO-8601 instant
 * @param expiresAt ISO-8601 instant after which it can no longer be approved
 * @param decidedAt ISO-8601 instant, or null
 * @param decidedBy who decided: {@code cli:<user>}, {@code key:<key id>}, {@code
 *     elicitation:<client>} or {@code agent:<tenant>}; null while pending
 * @param decidedVia {@code cli}, {@code rest}, {@code elicitation}, {@code agent} or {@code ttl}
 * @param decisionReason the reason given, or null
 */
public record Approval(
    String approvalId,
    String runId,
    @JsonIgnore String tenant,
    String sessionId,
    String state,
    String why,
    String code,
    List<RiskFinding> riskFindings,
    String requestedAt,
    String expiresAt,
    String decidedAt,
    String decidedBy,
    String decidedVia,
    String decisionReason) {
  public static final String PENDING = "pending";
  public static final String APPROVED = "approved";
  public static final String DENIED = "denied";
  public static final String EXPIRED = "expired";

  public Approval {
    riskFindings = riskFindings == null ? List.of() : List.copyOf(riskFindings);
  }

  /** This approval with the run's code. */
  public Approval withCode(String runCode) {
    return new Approval(
        approvalId,
        runId,
        tenant,
        sessionId,
        state,
        why,
        runCode,
        riskFindings,
        requestedAt,
        expiresAt,
        decidedAt,
        decidedBy,
        decidedVia,
        decisionReason);
  }
}

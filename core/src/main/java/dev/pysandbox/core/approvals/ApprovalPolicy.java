package dev.pysandbox.core.approvals;

import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RiskFinding;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.analysis.CodeAnalysis;
import java.util.Comparator;
import java.util.List;

/**
 * Which runs wait for a person, decided before anything runs: the code is analysed ({@link
 * CodeAnalysis}) when the call asks for approval or the server's {@code approval_policy} is not
 * {@code off}, and a run waits when the policy is {@code always} or a finding is at or above {@code
 * approval_threshold}; a run the analysis could not look at waits too (failing closed).
 */
public final class ApprovalPolicy {
  private final PysandboxConfig config;
  private final CodeAnalysis analysis;

  public ApprovalPolicy(PysandboxConfig config, CodeAnalysis analysis) {
    this.config = config;
    this.analysis = analysis;
  }

  /**
   * What the analysis said of a request.
   *
   * @param findings every finding, most severe first
   * @param why why the run must wait, or null when it runs at once
   */
  public record Verdict(List<RiskFinding> findings, String why) {
    public boolean mustWait() {
      return why != null;
    }
  }

  /**
   * Analyses the request's code when the call or the policy asks for approval.
   *
   * @return null when no analysis is asked for (the policy is off and the call did not ask)
   */
  public Verdict verdict(ExecutionRequest request) {
    boolean asked = Boolean.TRUE.equals(request.requireApproval());
    String policy = config.approvalPolicy();
    if (!asked && policy.equals("off")) {
      return null;
    }
    List<RiskFinding> findings;
    try {
      findings =
          analysis.analyze(request.code()).riskFindings().stream()
              .sorted(Comparator.comparingInt((RiskFinding f) -> -RiskFinding.rank(f.severity())))
              .toList();
    } catch (RuntimeException e) {
      findings =
          List.of(
              new RiskFinding(
                  "analysis_unavailable",
                  "critical",
                  "the code could not be analysed ("
                      + e.getMessage()
                      + "), so it waits for a person (failing closed)",
                  null,
                  null,
                  null));
    }
    String threshold = config.approvalThreshold();
    List<RiskFinding> over = findings.stream().filter(f -> f.atLeast(threshold)).toList();
    if (policy.equals("always")) {
      return new Verdict(findings, "the server's approval_policy is always");
    }
    if (!over.isEmpty()) {
      StringBuilder why =
          new StringBuilder()
              .append(over.size())
              .append(over.size() == 1 ? " finding" : " findings")
              .append(" at or above ")
              .append(threshold)
              .append(": ");
      for (int i = 0; i < Math.min(3, over.size()); i++) {
        RiskFinding f = over.get(i);
        why.append(i == 0 ? "" : "; ")
            .append(f.severity())
            .append(' ')
            .append(f.rule())
            .append(f.line() == null ? "" : " (line " + f.line() + ")");
      }
      if (over.size() > 3) {
        why.append("; …");
      }
      return new Verdict(findings, why.toString());
    }
    return new Verdict(findings, null);
  }
}

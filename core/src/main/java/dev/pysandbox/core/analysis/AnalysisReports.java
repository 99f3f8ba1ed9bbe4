package dev.pysandbox.core.analysis;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.api.RiskFinding;
import dev.pysandbox.api.ValidationReport;
import dev.pysandbox.api.ValidationReport.SyntaxProblem;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The analyser's JSON report as a {@link ValidationReport}, shape checked: the analysis sandbox
 * runs no user code, but its answer crosses a process boundary, so every field is bounded here (an
 * unknown severity counts as {@code high}, texts are cut to their documented lengths).
 */
final class AnalysisReports {
  static final int MAX_SNIPPET = 200;
  static final int MAX_MESSAGE = 500;
  static final int MAX_FINDINGS = 1_000;

  private AnalysisReports() {}

  static ValidationReport read(JsonNode report, double analysisMs) {
    List<SyntaxProblem> errors = new ArrayList<>();
    for (JsonNode e : report.path("syntax_errors")) {
      errors.add(
          new SyntaxProblem(
              positive(e.path("line")), positive(e.path("column")), text(e.path("message"), 500)));
    }
    List<RiskFinding> findings = new ArrayList<>();
    for (JsonNode f : report.path("risk_findings")) {
      if (findings.size() == MAX_FINDINGS) {
        break;
      }
      String severity = f.path("severity").asText();
      findings.add(
          new RiskFinding(
              text(f.path("rule"), 64),
              RiskFinding.rank(severity) < 0 ? "high" : severity,
              text(f.path("message"), MAX_MESSAGE),
              positive(f.path("line")),
              positive(f.path("column")),
              f.path("snippet").isTextual() ? text(f.path("snippet"), MAX_SNIPPET) : null));
    }
    findings.sort(Comparator.comparingInt((RiskFinding f) -> -RiskFinding.rank(f.severity())));
    boolean valid = report.path("valid").asBoolean(false) && errors.isEmpty();
    return new ValidationReport(
        valid,
        errors,
        findings,
        findings.isEmpty() ? null : findings.get(0).severity(),
        Math.max(0, report.path("lines").asInt()),
        Math.max(0, report.path("functions").asInt()),
        Math.max(0, report.path("imports").asInt()),
        Math.round(analysisMs * 1000) / 1000.0);
  }

  private static Integer positive(JsonNode n) {
    return n.isInt() && n.asInt() > 0 ? n.asInt() : null;
  }

  private static String text(JsonNode n, int max) {
    String s = n.asText("");
    return s.length() > max ? s.substring(0, max) : s;
  }
}

package dev.pysandbox.core.analysis;

import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.ValidationReport;
import dev.pysandbox.api.ValidationReport.SyntaxProblem;
import dev.pysandbox.core.audit.Provenance;
import dev.pysandbox.util.Sha256;
import java.time.Instant;

/**
 * {@code run_python(dry_run=true)}: the code's analysis in the shape of a run, {@code dry_run},
 * with no run id (nothing is recorded, so there is nothing to fetch again), no sandbox of its own
 * and nothing run. A syntax error is the run's {@code error}, as a real run would have it.
 */
public final class DryRuns {
  private DryRuns() {}

  public static RunRecord record(
      String tenant,
      ExecutionRequest request,
      ValidationReport report,
      int timeoutSeconds,
      Instant now,
      Provenance provenance) {
    RunRecord.Builder run =
        provenance
            .applyTo(RunRecord.builder())
            .tenant(tenant)
            .runId(null)
            .sessionId(request.sessionId())
            .description(request.description())
            .status(RunStatus.DRY_RUN)
            .message(summary(report))
            .codeHash(Sha256.hex(request.code()))
            .timeoutSeconds(timeoutSeconds)
            .createdAt(now.toString())
            .riskFindings(report.riskFindings());
    if (!report.syntaxErrors().isEmpty()) {
      SyntaxProblem p = report.syntaxErrors().get(0);
      run.error(new ErrorInfo("SyntaxError", p.message(), where(p) + ": " + p.message()));
    }
    return run.build();
  }

  /** "dry run: valid, 2 findings (highest: high); nothing ran". */
  static String summary(ValidationReport report) {
    StringBuilder s = new StringBuilder("dry run: ");
    if (report.valid()) {
      s.append("valid");
    } else if (report.syntaxErrors().isEmpty()) {
      s.append("not valid");
    } else {
      SyntaxProblem p = report.syntaxErrors().get(0);
      s.append("not valid (").append(where(p)).append(": ").append(p.message()).append(')');
    }
    int n = report.riskFindings().size();
    if (n == 0) {
      s.append(", no findings");
    } else {
      s.append(", ")
          .append(n)
          .append(n == 1 ? " finding" : " findings")
          .append(" (highest: ")
          .append(report.maxSeverity())
          .append(')');
    }
    return s.append("; nothing ran").toString();
  }

  /** "line 3, column 5", "line 3", or "the code" when Python named no line. */
  static String where(SyntaxProblem p) {
    if (p.line() == null) {
      return "the code";
    }
    return "line " + p.line() + (p.column() == null ? "" : ", column " + p.column());
  }
}

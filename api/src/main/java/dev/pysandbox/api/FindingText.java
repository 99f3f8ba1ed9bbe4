package dev.pysandbox.api;

import java.util.List;

/**
 * The text form of risk findings and of a {@code validate_code} report, for clients that show only
 * text (MCP's text content) and for a run's summary; one renderer so that both say findings alike.
 * Stateless and thread-safe.
 */
public final class FindingText {
  private FindingText() {}

  /**
   * "valid; 2 findings (highest: high), analysed in 2.1 ms" and then one line per finding, or "not
   * valid: line 1, column 1: 'return' outside function; no findings …". Ends with a newline.
   */
  public static String summary(ValidationReport report) {
    StringBuilder s = new StringBuilder();
    if (report.valid()) {
      s.append("valid");
    } else {
      s.append("not valid");
      for (ValidationReport.SyntaxProblem p : report.syntaxErrors()) {
        s.append(": ");
        if (p.line() != null) {
          s.append("line ").append(p.line());
          if (p.column() != null) {
            s.append(", column ").append(p.column());
          }
          s.append(": ");
        }
        s.append(p.message());
      }
    }
    int n = report.riskFindings().size();
    s.append(n == 0 ? "; no findings" : "; " + n + (n == 1 ? " finding" : " findings"));
    if (n > 0) {
      s.append(" (highest: ").append(report.maxSeverity()).append(')');
    }
    s.append("; ")
        .append(report.lines())
        .append(" lines, ")
        .append(report.functions())
        .append(" functions, ")
        .append(report.imports())
        .append(" imports; analysed in ")
        .append(report.analysisMs())
        .append(" ms\n");
    s.append(lines(report.riskFindings()));
    return s.toString();
  }

  /** One line per finding, its snippet indented under it; "" for none. */
  public static String lines(List<RiskFinding> findings) {
    StringBuilder s = new StringBuilder();
    for (RiskFinding f : findings) {
      s.append(f.severity()).append(' ').append(f.rule());
      if (f.line() != null) {
        s.append(" line ").append(f.line());
        if (f.column() != null) {
          s.append(", column ").append(f.column());
        }
      }
      s.append(": ").append(f.message()).append('\n');
      if (f.snippet() != null && !f.snippet().isEmpty()) {
        s.append("    ").append(f.snippet()).append('\n');
      }
    }
    return s.toString();
  }
}

package dev.pysandbox.api;

import java.util.List;

/**
 * What {@code validate_code} says of code without running it.
 *
 * @param valid true when the code compiles as a module
 * @param syntaxErrors why it does not (empty when valid)
 * @param riskFindings what the code tries to do that a reviewer should see, most severe first
 * @param maxSeverity the most severe finding's severity, or {@code null} when there is none
 * @param lines lines of code
 * @param functions function definitions (lambdas excluded)
 * @param imports import statements
 * @param analysisMs how long the analysis took, measured by the server
 */
public record ValidationReport(
    boolean valid,
    List<SyntaxProblem> syntaxErrors,
    List<RiskFinding> riskFindings,
    String maxSeverity,
    int lines,
    int functions,
    int imports,
    double analysisMs) {

  public ValidationReport {
    syntaxErrors = syntaxErrors == null ? List.of() : List.copyOf(syntaxErrors);
    riskFindings = riskFindings == null ? List.of() : List.copyOf(riskFindings);
  }

  /**
   * One reason code does not compile.
   *
   * @param line 1-based
   * @param column 1-based, or {@code null}
   * @param message Python's message ({@code 'return' outside function})
   */
  public record SyntaxProblem(Integer line, Integer column, String message) {}
}

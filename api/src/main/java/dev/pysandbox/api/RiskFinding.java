package dev.pysandbox.api;

import java.util.List;

/**
 * One finding of the risk analysis of code (Python's own {@code ast}, in a sandbox).
 *
 * @param rule the rule that matched, a stable name such as {@code process_execution}
 * @param severity {@code critical}, {@code high}, {@code medium} or {@code low}
 * @param message what was found, in words
 * @param line 1-based line it points at, or {@code null} for the code as a whole
 * @param column 1-based column, or {@code null}
 * @param snippet the source of the line (at most 200 characters), or {@code null}
 */
public record RiskFinding(
    String rule, String severity, String message, Integer line, Integer column, String snippet) {
  /** The severities, least first. */
  public static final List<String> SEVERITIES = List.of("low", "medium", "high", "critical");

  /** The rank of a severity in {@link #SEVERITIES}, or -1 for an unknown one. */
  public static int rank(String severity) {
    return SEVERITIES.indexOf(severity);
  }

  /** True when this finding is at {@code threshold} or above. */
  public boolean atLeast(String threshold) {
    return rank(severity) >= rank(threshold);
  }
}

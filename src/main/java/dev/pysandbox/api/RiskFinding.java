package dev.pysandbox.api;

/**
 * One finding of the risk analysis of a run's code.
 *
 * @param rule the rule that matched, a stable name such as {@code subprocess}
 * @param severity {@code low}, {@code medium} or {@code high}
 * @param line 1-based line of the code it points at, or {@code null} for the code as a whole
 * @param message what was found, in words
 */
public record RiskFinding(String rule, String severity, Integer line, String message) {}

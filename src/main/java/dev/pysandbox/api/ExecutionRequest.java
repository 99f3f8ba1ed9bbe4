package dev.pysandbox.api;

/**
 * One request to run code. Validated by the core, not here: faces pass what they received.
 *
 * @param code Python source (at most the configured size in UTF-8 bytes, not blank, no NUL)
 * @param sessionId the session to run in, or {@code null} for a fresh one-shot sandbox
 * @param description free text kept with the run; only ever treated as data
 * @param timeoutSeconds wall-clock limit, or {@code null} for the configured default
 */
public record ExecutionRequest(
    String code, String sessionId, String description, Integer timeoutSeconds) {

  public static ExecutionRequest of(String code) {
    return new ExecutionRequest(code, null, null, null);
  }
}

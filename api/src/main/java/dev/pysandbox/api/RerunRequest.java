package dev.pysandbox.api;

/**
 * Run a recorded run again: a new run whose {@code parent_run_id} is the original, with the
 * original's code, description and limits unless the request overrides them.
 *
 * @param runId the run to re-run
 * @param code code to run instead of the original's, or null
 * @param description a description instead of the original's, or null
 * @param timeoutSeconds a wall-clock limit instead of the original's, or null
 * @param sessionId run in this session (its own limits apply) instead of a fresh sandbox with the
 *     original's limits, or null
 * @param packages packages instead of the original's (PEP 508), or null for the original's
 */
public record RerunRequest(
    String runId,
    String code,
    String description,
    Integer timeoutSeconds,
    String sessionId,
    java.util.List<String> packages) {
  public RerunRequest {
    packages = packages == null ? null : java.util.List.copyOf(packages);
    Ids.requireRunId(runId);
    if (sessionId != null) {
      Ids.requireSessionId(sessionId);
    }
  }

  /** A re-run with the original's packages. */
  public RerunRequest(
      String runId, String code, String description, Integer timeoutSeconds, String sessionId) {
    this(runId, code, description, timeoutSeconds, sessionId, null);
  }
}

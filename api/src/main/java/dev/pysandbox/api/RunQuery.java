package dev.pysandbox.api;

/**
 * A page of run history, newest first.
 *
 * @param limit 1..1000
 * @param offset 0 or more
 * @param status only runs in this state, or {@code null}
 * @param sessionId only runs of this session ({@link Ids}), or {@code null}
 * @throws PysandboxException {@code invalid_argument} naming what is wrong
 */
public record RunQuery(int limit, int offset, RunStatus status, String sessionId) {
  public static final int MAX_LIMIT = 1000;

  public RunQuery {
    if (limit < 1 || limit > MAX_LIMIT) {
      throw PysandboxException.invalid("limit must be 1.." + MAX_LIMIT + ", got " + limit);
    }
    if (offset < 0) {
      throw PysandboxException.invalid("offset must be 0 or more, got " + offset);
    }
    if (sessionId != null) {
      Ids.requireSessionId(sessionId);
    }
  }
}

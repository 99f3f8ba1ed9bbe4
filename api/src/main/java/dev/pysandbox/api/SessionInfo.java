package dev.pysandbox.api;

/**
 * A session as {@code list_sessions} shows it.
 *
 * @param sessionId an id ({@link Ids})
 * @param state {@code starting}, {@code idle}, {@code busy}, {@code dead} or {@code closed}
 * @param createdAt ISO-8601 instant
 * @param lastUsedAt ISO-8601 instant of the last call that used it
 * @param runCount executions run in it
 * @param workspaceBytes what its {@code /mnt/data} takes on disk (allocated blocks of every file,
 *     directory and link, as the disk quota counts them)
 * @param ttlMinutes idle minutes after which it is closed
 * @param deadReason how it died (timeout, cancel, exit, kill), when {@code state} is dead
 * @param limits the resource limits of its sandbox (empty for sessions of other servers)
 * @param tier the session's tier, fixed when it was created; {@code null} for sessions recorded
 *     before tiers
 * @param packages the packages its sandbox has (canonical PEP 508 requirements), fixed when it was
 *     created; empty for none
 * @param environment the key of its package environment, or {@code null}
 * @param ended how and when it ended, for a session that ended (state {@code closed}); written only
 *     then
 * @param tenant its owner, written only in an operator's listing of every tenant's sessions
 */
public record SessionInfo(
    String sessionId,
    SessionState state,
    String createdAt,
    String lastUsedAt,
    int runCount,
    long workspaceBytes,
    int ttlMinutes,
    String deadReason,
    java.util.Map<String, Object> limits,
    String tier,
    java.util.List<String> packages,
    String environment,
    @com.fasterxml.jackson.annotation.JsonInclude(
            com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        SessionEnd ended,
    @com.fasterxml.jackson.annotation.JsonInclude(
            com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        String tenant) {
  /** The longest idle TTL a session may ask for: a week. */
  public static final int MAX_TTL_MINUTES = 7 * 24 * 60;

  public SessionInfo {
    limits = limits == null ? java.util.Map.of() : limits;
    packages = packages == null ? java.util.List.of() : java.util.List.copyOf(packages);
  }

  /**
   * A session known by its id and state alone (no times, counts or limits): what a caller is told
   * of one another server process closed for it.
   */
  public static SessionInfo of(String sessionId, SessionState state) {
    return new SessionInfo(
        sessionId, state, null, null, 0, 0, 0, null, null, null, null, null, null, null);
  }

  /** This session, ended as {@code end} (state {@code closed}). */
  public SessionInfo withEnded(SessionEnd end) {
    return with(SessionState.CLOSED, end, tenant);
  }

  /** This session with its owner named (for an operator's listing of every tenant). */
  public SessionInfo withTenant(String owner) {
    return with(state, ended, owner);
  }

  private SessionInfo with(SessionState newState, SessionEnd newEnded, String newTenant) {
    return new SessionInfo(
        sessionId,
        newState,
        createdAt,
        lastUsedAt,
        runCount,
        workspaceBytes,
        ttlMinutes,
        deadReason,
        limits,
        tier,
        packages,
        environment,
        newEnded,
        newTenant);
  }
}

package dev.pysandbox.core.sessions;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SessionEnd;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.util.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Sessions that ended, remembered for {@code session_retention}, so that a call naming one is told
 * that its state is gone ({@code session_expired}, {@code session_closed}, {@code session_lost}, or
 * the error its creation failed with) instead of getting a new, empty session under the same name
 * and a {@code NameError}. This server's own ends are answered from memory at once (the journal
 * writes them to the store a moment later); every server's, and those from before a restart, from
 * the store's {@code sessions} rows. Ids are per tenant, so another tenant's end is never seen: for
 * that tenant the id is simply new.
 */
public final class SessionEnds {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(SessionEnds.class);

  private final Map<SessionKey, SessionInfo> recent = new ConcurrentHashMap<>();
  private final Supplier<RunStore> store;
  private final TimeSource clock;
  private final Duration retention;
  private final String instanceId;

  public SessionEnds(
      Supplier<RunStore> store, TimeSource clock, int retentionMinutes, String instanceId) {
    this.store = store;
    this.clock = clock;
    this.retention = Duration.ofMinutes(retentionMinutes);
    this.instanceId = instanceId;
  }

  /**
   * Ends before this instant no longer matter: such an id may be used again as a new one (any end,
   * with no retention).
   */
  Instant reusableBefore() {
    return retention.isZero() ? Instant.MAX : clock.instant().minus(retention);
  }

  /** A session of this server ended ({@code session.ended()} set); the journal records it. */
  void ended(SessionKey key, SessionInfo session) {
    if (retention.isZero()) {
      return;
    }
    Instant stale = reusableBefore();
    recent.values().removeIf(s -> endOf(s).isBefore(stale));
    recent.put(key, session);
  }

  /** A creation's failure as the end of its session. */
  static SessionEnd failure(RuntimeException e, Instant at) {
    ErrorCode code = e instanceof PysandboxException p ? p.code() : ErrorCode.INTERNAL;
    String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return new SessionEnd(SessionEnd.FAILED, at.toString(), why, code.wireName());
  }

  /**
   * Records a session whose creation failed before any sandbox was made for it (its environment
   * could not be built, its way out not made), so that the next call naming it does not make it
   * without them. A failure to record is logged: the caller reports the creation's own error.
   */
  public void creationFailed(
      SessionKey key, int ttlMinutes, String tier, List<String> packages, RuntimeException e) {
    if (retention.isZero()) {
      return;
    }
    Instant now = clock.instant();
    SessionInfo session =
        new SessionInfo(
                key.id(),
                SessionState.CLOSED,
                now.toString(),
                now.toString(),
                0,
                0,
                ttlMinutes,
                null,
                null,
                tier,
                packages,
                null,
                null,
                null)
            .withEnded(failure(e, now));
    ended(key, session);
    try {
      store.get().recordFailedSession(key.tenant(), session, instanceId);
    } catch (RuntimeException x) {
      log.warn("session {}: its failed creation could not be recorded: {}", key, x.toString());
    }
  }

  /** A new session has the id now. */
  void forget(SessionKey key) {
    recent.remove(key);
  }

  /**
   * For a call that needs the session to exist (context, files, close): nothing when the id did not
   * end within the retention.
   *
   * @throws PysandboxException the end's code when it did
   */
  void requireNotEnded(SessionKey key) {
    find(key)
        .ifPresent(
            s -> {
              throw error(s);
            });
  }

  /**
   * For a call that would create the session (a run, an upload naming it): a session that ended
   * within the retention is not made again empty. A creation that failed is tried again only by a
   * call that asks for at least what it asked for (its tier and every package), so that a session
   * is never made without its packages; {@code create_session} ({@code explicit}) says the caller
   * wants a new session, and always may.
   *
   * @param tier the tier this call's session would have
   * @param packages the canonical requirements this call's session would have
   * @throws PysandboxException the end's code (a failed creation's own code, not retryable)
   */
  void requireCreatable(SessionKey key, String tier, List<String> packages, boolean explicit) {
    if (explicit) {
      return;
    }
    Optional<SessionInfo> ended = find(key);
    if (ended.isEmpty()) {
      return;
    }
    SessionInfo s = ended.get();
    if (SessionEnd.FAILED.equals(s.ended().as())
        && tier.equals(s.tier())
        && packages.containsAll(s.packages())) {
      return; // the same creation again: it may work now
    }
    throw error(s);
  }

  private Optional<SessionInfo> find(SessionKey key) {
    if (retention.isZero()) {
      return Optional.empty();
    }
    Instant since = reusableBefore();
    SessionInfo mine = recent.get(key);
    if (mine != null && !endOf(mine).isBefore(since)) {
      return Optional.of(mine);
    }
    return store
        .get()
        .recordedSession(key.tenant(), key.id())
        .filter(s -> s.ended() != null && !endOf(s).isBefore(since));
  }

  /** What the tenant's sessions that ended within the retention are, the oldest end first. */
  public List<SessionInfo> list(String tenant) {
    if (retention.isZero()) {
      return List.of();
    }
    Map<String, SessionInfo> byId = new java.util.LinkedHashMap<>();
    for (SessionInfo s : store.get().endedSessions(tenant, reusableBefore())) {
      byId.put(s.sessionId(), s);
    }
    recent.forEach(
        (k, s) -> {
          if (k.tenant().equals(tenant) && !endOf(s).isBefore(reusableBefore())) {
            byId.put(k.id(), s);
          }
        });
    return byId.values().stream()
        .sorted(java.util.Comparator.comparing(SessionEnds::endOf))
        .toList();
  }

  private static Instant endOf(SessionInfo s) {
    return Instant.parse(s.ended().at());
  }

  /**
   * The answer to a call naming a session that ended: its code, when and why, that its state is
   * gone, what to do, and until when the id answers so.
   */
  Ended error(SessionInfo s) {
    SessionEnd end = s.ended();
    String id = "session '" + s.sessionId() + "'";
    String until =
        "; until "
            + endOf(s).plus(retention)
            + " (session_retention) a call naming it gets this answer";
    if (SessionEnd.FAILED.equals(end.as())) {
      ErrorCode code = codeOf(end.errorCode());
      return new Ended(
          code,
          id
              + " does not exist: its creation at "
              + end.at()
              + " failed ("
              + code.wireName()
              + ": "
              + end.reason()
              + "), so nothing was made. Create it again with what it asked for (tier "
              + s.tier()
              + (s.packages().isEmpty() ? "" : ", packages " + s.packages())
              + ": create_session, or run_python with those packages), or use another"
              + " session_id"
              + until);
    }
    ErrorCode code;
    String what;
    switch (end.as()) {
      case SessionEnd.EXPIRED -> {
        code = ErrorCode.SESSION_EXPIRED;
        what = " expired at " + end.at() + " " + end.reason();
      }
      case SessionEnd.LOST -> {
        code = ErrorCode.SESSION_LOST;
        what =
            " was lost at "
                + end.at()
                + ": "
                + end.reason()
                + " (last used at "
                + s.lastUsedAt()
                + ")";
      }
      default -> {
        code = ErrorCode.SESSION_CLOSED;
        what = " was closed at " + end.at() + " " + end.reason();
      }
    }
    if (s.deadReason() != null && !SessionEnd.LOST.equals(end.as())) {
      what += " (its sandbox had died before: " + s.deadReason() + ")";
    }
    return new Ended(
        code,
        id
            + what
            + "; its variables and files are gone. Start again in a new session: create_session"
            + " makes this id a new, empty session, or use another session_id"
            + until);
  }

  /** A call named a session that ended within the retention; never retryable as it is. */
  public static final class Ended extends PysandboxException {
    private static final long serialVersionUID = 1L;

    public Ended(ErrorCode code, String message) {
      super(code, message, false);
    }
  }

  private static ErrorCode codeOf(String wireName) {
    for (ErrorCode c : ErrorCode.values()) {
      if (c.wireName().equals(wireName)) {
        return c;
      }
    }
    return ErrorCode.INTERNAL;
  }
}

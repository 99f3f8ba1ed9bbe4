package dev.pysandbox.core.sessions;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.core.host.StoreHandle;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.util.Pause;
import dev.pysandbox.util.TimeSource;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes sessions across the server processes that share a data directory: one of ours is closed
 * here; one another process owns is asked for through the store, and waited for. Serves the same
 * requests from other processes for ours ({@link #serveRequests()}, every second).
 */
public final class SessionCloser {
  private static final Logger log = LoggerFactory.getLogger(SessionCloser.class);
  private static final long OWNER_WAIT_SECONDS = 10;
  private static final long POLL_MILLIS = 100;

  private final SessionManager sessions;
  private final StoreHandle store;
  private final String instanceId;
  private final TimeSource time;
  private final java.util.function.Predicate<String> alive;

  public SessionCloser(
      SessionManager sessions,
      StoreHandle store,
      String instanceId,
      TimeSource time,
      java.util.function.Predicate<String> alive) {
    this.alive = alive;
    this.sessions = sessions;
    this.store = store;
    this.instanceId = instanceId;
    this.time = time;
  }

  /**
   * Closes the session here, or asks the process that owns it and waits up to 10 s for it to be
   * recorded closed.
   */
  public SessionInfo close(String tenant, String sessionId) {
    Ids.requireSessionId(sessionId);
    SessionKey key = new SessionKey(tenant, sessionId);
    if (sessions.find(key) != null || !store.get().requestClose(key)) {
      return sessions.close(key, "by close_session");
    }
    long deadline = time.nanoTime() + TimeUnit.SECONDS.toNanos(OWNER_WAIT_SECONDS);
    while (time.nanoTime() - deadline < 0) {
      var still =
          store.get().openSessions(tenant, alive).stream()
              .filter(s -> s.sessionId().equals(sessionId) && s.ended() == null)
              .findFirst();
      if (still.isEmpty()) {
        return SessionInfo.of(sessionId, SessionState.CLOSED);
      }
      Pause.millis(POLL_MILLIS);
    }
    throw new PysandboxException(
        ErrorCode.SESSION_BUSY,
        "session '"
            + sessionId
            + "' belongs to another server process, which has not closed it within "
            + OWNER_WAIT_SECONDS
            + " s (it may be running code)");
  }

  /** Closes the sessions other processes asked this one to close (pysandbox sessions close). */
  public void serveRequests() {
    if (store.ifOpen().isEmpty()) {
      return;
    }
    try {
      for (SessionKey id : store.get().closeRequests(instanceId)) {
        try {
          sessions.close(id, "by a request from another process (pysandbox sessions close)");
        } catch (PysandboxException e) {
          log.debug("close request for {} deferred: {}", id, e.getMessage());
        }
      }
    } catch (RuntimeException e) {
      log.warn("checking close requests failed: {}", e.getMessage());
    }
  }
}

package dev.pysandbox.core.sessions;

import dev.pysandbox.api.SessionEnd;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.util.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Idle sessions closed once their TTL has passed, every 30 s (and by tests with a moved clock): a
 * session busy with an operation, or whose sandbox is still starting, is left for the next round.
 */
public final class SessionExpiry {
  private final SessionManager sessions;
  private final TimeSource clock;

  public SessionExpiry(SessionManager sessions, TimeSource clock) {
    this.sessions = sessions;
    this.clock = clock;
  }

  /**
   * Closes sessions idle for longer than their TTL, each recorded {@code expired}.
   *
   * @return the sessions closed
   */
  public List<SessionKey> expireIdle() {
    Instant now = clock.instant();
    List<SessionKey> closed = new ArrayList<>();
    for (Session s : sessions.all()) {
      Duration idle = Duration.between(s.lastUsedAt(), now);
      if (idle.toMinutes() < s.ttlMinutes || !s.sandbox.isDone()) {
        continue;
      }
      if (!s.lock.tryLock()) {
        continue;
      }
      try {
        if (!s.isClosed()) {
          sessions.closeLocked(
              s,
              SessionEnd.EXPIRED,
              "after " + idle.toMinutes() + " min idle (ttl " + s.ttlMinutes + " min)");
          closed.add(s.key());
        }
      } finally {
        s.lock.unlock();
      }
    }
    return closed;
  }
}

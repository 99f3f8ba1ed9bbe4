package dev.pysandbox.core.sessions;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SessionEnd;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.config.Tier;
import dev.pysandbox.core.environments.Environments;
import dev.pysandbox.core.sandboxes.SandboxSpecs;
import dev.pysandbox.core.sandboxes.WarmPool;
import dev.pysandbox.store.SessionClaim;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.util.TimeSource;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The open sessions of this server: creation (at most {@code max_sessions}, one session per id
 * however many callers race), one operation at a time per session, death, idle expiry and closing.
 * Sandboxes come from the warm pool, so a new session does not wait for a process start, and a
 * pooled sandbox is only ever given to one session.
 */
public final class SessionManager {
  private static final Logger log = LoggerFactory.getLogger(SessionManager.class);

  /** What happens to a session when it is closed. */
  public interface Closer {
    void closed(Session session, Sandbox sandbox);
  }

  /**
   * Claims a new session's id for this server among all servers sharing the data directory.
   *
   * @param reusableBefore a recorded end before this instant lets the id be taken as new
   * @return whether it is ours, else the live server that has it or how it ended
   */
  public interface Claimer {
    SessionClaim claim(Session session, Instant reusableBefore);
  }

  private final PysandboxConfig config;
  private final TimeSource clock;
  private final WarmPool pool;
  private final SandboxSpecs specs;
  private final Executor blocking;
  private final Closer closer;
  private final SessionUse.Journal journal;
  private final Claimer claimer;
  private final SessionEnds ends;
  private final SessionUse use;
  private final SessionCaps caps;
  private final Map<SessionKey, Session> sessions = new ConcurrentHashMap<>();
  private final Object createLock = new Object();

  public SessionManager(
      PysandboxConfig config,
      TimeSource clock,
      WarmPool pool,
      SandboxSpecs specs,
      Executor blocking,
      Closer closer,
      SessionUse.Journal journal,
      Claimer claimer,
      SessionUse.Deaths deaths,
      SessionEnds ends) {
    this.ends = ends;
    this.specs = specs;
    this.journal = journal;
    this.claimer = claimer;
    this.use = new SessionUse(clock, config.startupTimeoutSeconds(), journal, deaths, ends);
    this.caps = new SessionCaps(config);
    this.config = config;
    this.clock = clock;
    this.pool = pool;
    this.blocking = blocking;
    this.closer = closer;
  }

  /**
   * The session with this id, created (and its sandbox taken from the pool) if there is none, in
   * the default tier with its limits.
   *
   * @throws PysandboxException {@code max_sessions} when a new one would pass the limit
   */
  public Session open(SessionKey id, Integer ttlMinutes) {
    Tier d = config.tiers().defaultTier();
    return open(id, ttlMinutes, d.limits(), d, Extras.NONE, false);
  }

  /**
   * What a new session's sandbox has beyond its tier and limits.
   *
   * @param env its package environment, or {@code null}
   * @param egress its way out (the network tier), or {@code null}
   * @param use released when its sandbox has exited (the environment's use), or {@code null}
   */
  public record Extras(Environments.Ready env, SandboxSpec.Egress egress, AutoCloseable use) {
    static final Extras NONE = new Extras(null, null, null);
  }

  /**
   * The session with this id as it is, or a new one with these limits and tier (whose sandbox is a
   * pooled one when the pool's are of this tier and limits, else one started for it) having {@code
   * extras}; an existing session is returned as it is (the caller compares its packages), and
   * {@code extras.use} is then released at once.
   *
   * @param explicit true for {@code create_session}: an id whose session ended may be made a new
   *     session at once; otherwise such an id answers how it ended ({@link SessionEnds})
   */
  public Session open(
      SessionKey id,
      Integer ttlMinutes,
      Limits limits,
      Tier tier,
      Extras extras,
      boolean explicit) {
    boolean handedOn = false;
    try {
      Session existing = sessions.get(id);
      if (existing != null) {
        return existing;
      }
      ends.requireCreatable(id, tier.name(), packagesOf(extras), explicit);
      int ttl = ttlMinutes == null ? config.sessionTtlMinutes() : ttlMinutes;
      Session created;
      synchronized (createLock) {
        existing = sessions.get(id);
        if (existing != null) {
          return existing;
        }
        caps.requireRoom(id, sessions.size(), sizeOf(id.tenant()));
        created = new Session(id, clock.instant(), ttl, limits, tier);
        created.env = extras.env();
        sessions.put(id, created);
      }
      handedOn = true;
      return start(created, tier, extras, explicit);
    } finally {
      if (!handedOn) {
        release(extras);
      }
    }
  }

  private static void release(Extras extras) {
    if (extras.use() != null) {
      dev.pysandbox.util.Closeables.quietly(extras.use(), log);
    }
  }

  /**
   * Claims the new session among the servers sharing the data directory and gives it a sandbox;
   * from here {@code extras.use} is this method's to release (or its sandbox's, once it has one).
   */
  private Session start(Session created, Tier tier, Extras extras, boolean explicit) {
    SessionKey id = created.key();
    Sandbox sandbox = null;
    boolean claimed = false;
    try {
      SessionClaim claim = claimer.claim(created, explicit ? Instant.MAX : ends.reusableBefore());
      if (claim.ended() != null) {
        throw ends.error(claim.ended());
      }
      if (claim.owner() != null) {
        throw new PysandboxException(
            ErrorCode.SESSION_BUSY,
            "session '"
                + id.id()
                + "' is open in another pysandbox server that shares this data directory"
                + " (instance "
                + claim.owner()
                + "); use another session_id, or close it there (pysandbox sessions close "
                + id.id()
                + ")");
      }
      claimed = true;
      SandboxSpec spec = specs.of(tier, created.limits);
      if (extras.env() != null) {
        spec = spec.withEnvironment(extras.env().mount());
      }
      if (extras.egress() != null) {
        spec = spec.withEgress(extras.egress());
      }
      Sandbox taken = pool.take(spec);
      sandbox = taken;
      if (extras.use() != null) {
        taken
            .exited()
            .whenComplete((x, e) -> dev.pysandbox.util.Closeables.quietly(extras.use(), log));
      }
      created.sandbox.complete(taken);
      // A sandbox that dies between calls makes its session dead at once (a run in flight says
      // why itself).
      taken
          .exited()
          .thenRun(
              () -> {
                if (!created.isClosed()
                    && created.deadReason() == null
                    && !created.lock.isLocked()) {
                  use.diedIdle(created, taken);
                }
              });
      log.info("session {} opened", id);
      ends.forget(id);
      journal.changed(created);
    } catch (RuntimeException e) {
      sessions.remove(id, created);
      if (claimed) {
        // Recorded as a failed creation: the next call does not make it without what it asked for.
        created.end(SessionEnds.failure(e, clock.instant()));
        ends.ended(id, created.info());
        journal.changed(created);
      } else {
        created.markClosed();
      }
      created.sandbox.completeExceptionally(e);
      if (sandbox == null) {
        release(extras);
      }
      throw e;
    }
    return created;
  }

  /**
   * For a call that would create the session: refuses an id that ended within the retention (see
   * {@link SessionEnds#requireCreatable}), before anything is built for it.
   */
  public void requireCreatable(SessionKey id, Tier tier, List<String> packages, boolean explicit) {
    if (sessions.get(id) == null) {
      ends.requireCreatable(id, tier.name(), packages, explicit);
    }
  }

  private static List<String> packagesOf(Extras extras) {
    return extras.env() == null ? List.of() : extras.env().requirements();
  }

  /** The open session with this id, or {@code null}. */
  public Session find(SessionKey id) {
    Session s = sessions.get(id);
    return s == null || s.isClosed() ? null : s;
  }

  /**
   * @throws PysandboxException {@code session_expired}, {@code session_closed}, {@code
   *     session_lost} (or a failed creation's code) for a session that ended within the retention;
   *     {@code not_found} for one that never was
   */
  public Session require(SessionKey id) {
    Session s = sessions.get(id);
    if (s == null || s.isClosed()) {
      if (s != null && s.end() != null) {
        throw ends.error(s.info());
      }
      ends.requireNotEnded(id);
      throw new PysandboxException(
          ErrorCode.NOT_FOUND, "no open session '" + id.id() + "' (create it with create_session)");
    }
    return s;
  }

  /** Holds the session for one operation (see {@link SessionUse#lease}). */
  public SessionUse.Lease lease(Session s) {
    return use.lease(s);
  }

  /** Runs {@code op} holding the session's lock, with its sandbox (see {@link SessionUse}). */
  public <T> T with(Session s, Function<Sandbox, T> op) {
    return use.with(s, op);
  }

  /** The session's sandbox, waiting while it starts. */
  public Sandbox ready(Session s) {
    return use.ready(s);
  }

  /** The session's sandbox is gone (or is being killed); later calls get {@code session_dead}. */
  public void markDead(Session s, String reason) {
    use.markDead(s, reason);
  }

  /**
   * Closes a session: kills its sandbox, forgets it.
   *
   * @throws PysandboxException {@code session_busy} while it runs code
   */
  SessionInfo close(SessionKey id, String why) {
    return close(id, SessionEnd.CLOSED, why);
  }

  /**
   * Ends a session as {@code as} ({@link SessionEnd}), saying why.
   *
   * @throws PysandboxException {@code session_busy} while it runs code
   */
  private SessionInfo close(SessionKey id, String as, String why) {
    Session s = require(id);
    if (!s.lock.tryLock()) {
      throw new PysandboxException(
          ErrorCode.SESSION_BUSY,
          "session '"
              + id.id()
              + "' is running "
              + (s.runningRunId() == null ? "a call" : s.runningRunId())
              + "; cancel it (cancel_run) or wait before closing");
    }
    try {
      return closeLocked(s, as, why);
    } finally {
      s.lock.unlock();
    }
  }

  /** Ends a session whose lock the caller holds, as {@code as}, saying why. */
  SessionInfo closeLocked(Session s, String as, String why) {
    s.end(SessionEnd.of(as, clock.instant(), why));
    ends.ended(s.key(), s.info());
    sessions.remove(s.key(), s);
    Sandbox sandbox = s.sandbox.getNow(null);
    if (sandbox != null) {
      sandbox.kill("session closed");
      blocking.execute(() -> closer.closed(s, sandbox));
    }
    log.info("session {} {}: {}", s.key(), as, why);
    journal.changed(s);
    return s.info();
  }

  /** A tenant's sessions in creation order. */
  public List<SessionInfo> list(String tenant) {
    List<Session> all = new ArrayList<>();
    for (Session s : sessions.values()) {
      if (s.tenant.equals(tenant)) {
        all.add(s);
      }
    }
    all.sort(Comparator.comparing((Session s) -> s.createdAt).thenComparing(s -> s.id));
    List<SessionInfo> out = new ArrayList<>();
    for (Session s : all) {
      out.add(s.info());
    }
    return out;
  }

  /** Open sessions of every tenant. */
  public int size() {
    return sessions.size();
  }

  /** Shares {@code max_sessions} among the tenants with keys (see {@link SessionCaps}). */
  public void shareAmong(IntSupplier tenants) {
    caps.shareAmong(tenants);
  }

  private int sizeOf(String tenant) {
    int n = 0;
    for (SessionKey k : sessions.keySet()) {
      if (k.tenant().equals(tenant)) {
        n++;
      }
    }
    return n;
  }

  /** The sessions open here, of every tenant. */
  java.util.Collection<Session> all() {
    return sessions.values();
  }

  /** Closes every session (server shutdown): each is lost, as its server stops. */
  public void closeAll(String reason) {
    for (Session s : sessions.values()) {
      s.end(
          SessionEnd.of(
              SessionEnd.LOST,
              clock.instant(),
              "its server stopped while it was open (" + reason + ")"));
      journal.changed(s);
      s.sandbox.thenAccept(sandbox -> sandbox.kill("server shutting down"));
    }
    sessions.clear();
  }
}

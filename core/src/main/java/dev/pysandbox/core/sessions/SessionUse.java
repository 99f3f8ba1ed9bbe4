package dev.pysandbox.core.sessions;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.util.TimeSource;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One operation at a time per session, on a live sandbox: a call holds the session's lock for the
 * whole of its operation (a second one gets {@code session_busy} instead of waiting), finds it dead
 * when its sandbox is gone (a death while idle is told once), and marks it dead when an operation
 * lost the sandbox. Apart from the registry of sessions, which makes, finds and ends them.
 */
public final class SessionUse {
  private static final Logger log = LoggerFactory.getLogger(SessionUse.class);

  /** Told after every change of a session (open, use, death, close), on the calling thread. */
  public interface Journal {
    void changed(Session session);
  }

  /**
   * Told, once, when a session's sandbox died while the session was idle (it exited, was killed
   * from outside, or its launcher died): no run of its own says so.
   */
  public interface Deaths {
    void died(Session session, String reason);
  }

  private final TimeSource clock;
  private final int startupTimeoutSeconds;
  private final Journal journal;
  private final Deaths deaths;
  private final SessionEnds ends;

  SessionUse(
      TimeSource clock,
      int startupTimeoutSeconds,
      Journal journal,
      Deaths deaths,
      SessionEnds ends) {
    this.clock = clock;
    this.startupTimeoutSeconds = startupTimeoutSeconds;
    this.journal = journal;
    this.deaths = deaths;
    this.ends = ends;
  }

  /**
   * Holds the session for one operation: its lock, with its sandbox, until the lease is closed
   * (which notes the use). The run path holds it across its steps; {@link #with} wraps one call.
   *
   * @throws PysandboxException {@code session_busy} while another operation holds it, {@code
   *     session_dead} when its sandbox is gone
   */
  Lease lease(Session s) {
    Sandbox sandbox = ready(s);
    if (!s.lock.tryLock()) {
      String running = s.runningRunId();
      throw new PysandboxException(
          ErrorCode.SESSION_BUSY,
          "session '"
              + s.id
              + "' is busy"
              + (running == null ? " with another call" : " running " + running)
              + "; one execution at a time per session (cancel_run stops it)");
    }
    Lease lease = new Lease(s, sandbox);
    try {
      if (s.isClosed()) {
        throw s.end() != null
            ? ends.error(s.info())
            : new PysandboxException(ErrorCode.NOT_FOUND, "session '" + s.id + "' was closed");
      }
      if (s.deadReason() == null && !sandbox.worker().isOpen()) {
        diedIdle(s, sandbox);
      }
      if (s.deadReason() != null) {
        throw dead(s);
      }
      return lease;
    } catch (RuntimeException | Error e) {
      lease.close();
      throw e;
    }
  }

  /** Runs {@code op} holding the session's lock, with its sandbox (see {@link #lease}). */
  <T> T with(Session s, Function<Sandbox, T> op) {
    try (Lease lease = lease(s)) {
      return op.apply(lease.sandbox());
    }
  }

  /** A session held for one operation; closing it lets the session go and notes the use. */
  public final class Lease implements AutoCloseable {
    private final Session session;
    private final Sandbox sandbox;

    private Lease(Session session, Sandbox sandbox) {
      this.session = session;
      this.sandbox = sandbox;
    }

    public Sandbox sandbox() {
      return sandbox;
    }

    @Override
    public void close() {
      session.touch(clock.instant());
      session.lock.unlock();
      journal.changed(session);
    }
  }

  /** The sandbox of an idle session died: the session is dead, and that is told once. */
  void diedIdle(Session s, Sandbox sandbox) {
    String reason = idleDeath(sandbox);
    boolean first = s.die(reason);
    markDead(s, reason);
    if (first) {
      try {
        deaths.died(s, reason);
      } catch (RuntimeException e) {
        log.warn("session {}: its death could not be told: {}", s.id, e.toString());
      }
    }
  }

  private static String idleDeath(Sandbox sandbox) {
    String violation = sandbox.worker().protocolViolation();
    if (violation != null) {
      return "protocol_violation: while the session was idle its sandbox broke the worker"
          + " protocol ("
          + violation
          + ") and was killed";
    }
    var exit = sandbox.exited().getNow(null);
    return "exited: its sandbox "
        + (exit != null
            ? exit.describe()
            : "stopped (" + sandbox.worker().closed().getNow("") + ")")
        + " while the session was idle";
  }

  /** The session's sandbox, waiting while it starts. */
  Sandbox ready(Session s) {
    try {
      return s.sandbox.get(startupTimeoutSeconds + 10L, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof PysandboxException p) {
        throw p;
      }
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "session '" + s.id + "' could not start: " + e.getCause(),
          e);
    } catch (TimeoutException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "session '" + s.id + "' is still starting");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted", e);
    }
  }

  static PysandboxException dead(Session s) {
    return new PysandboxException(
        ErrorCode.SESSION_DEAD,
        "session '"
            + s.id
            + "' is dead: "
            + s.deadReason()
            + "; its variables are lost (its files remain readable until it is closed);"
            + " close it with close_session and start a new one");
  }

  /** The session's sandbox is gone (or is being killed); later calls get {@code session_dead}. */
  void markDead(Session s, String reason) {
    s.die(reason);
    journal.changed(s);
    log.warn("session {} is dead: {}", s.id, reason);
    s.sandbox.thenAccept(sandbox -> sandbox.kill(reason));
  }
}

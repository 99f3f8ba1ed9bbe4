package dev.pysandbox.core.runs;

import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.core.events.LiveRuns;
import dev.pysandbox.core.sandboxes.KillOutcome;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.core.sessions.SessionManager;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.TimeSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runs in flight on this server, as {@code cancel_run}, a waiting {@code get_run}, the gauges
 * and a stopping server see them: each registered before it is recorded (so that a cancel never
 * finds a running run it cannot reach) and released once it has ended. Cancel, interrupt and drain
 * act on runs here; what a run does is the executor's.
 */
public final class InFlightRuns {
  private static final Logger log = LoggerFactory.getLogger(InFlightRuns.class);

  private final TimeSource clock;
  private final Supplier<RunStore> store;
  private final int cancelGraceSeconds;
  private final LiveRuns live;
  private final SessionManager sessions;
  private final Map<String, ActiveRun> active = new ConcurrentHashMap<>();
  private volatile boolean refusing;

  /**
   * @param sessions where a session whose run did not stop on a cancel is marked dead
   */
  public InFlightRuns(
      TimeSource clock,
      Supplier<RunStore> store,
      int cancelGraceSeconds,
      LiveRuns live,
      SessionManager sessions) {
    this.clock = clock;
    this.store = store;
    this.cancelGraceSeconds = cancelGraceSeconds;
    this.live = live;
    this.sessions = sessions;
  }

  /**
   * Registers a run about to be recorded, with its event log.
   *
   * @param approved true for a run that waited for approval: one of that id in flight already is
   *     refused
   * @throws PysandboxException {@code backend_unavailable} once the server is stopping
   */
  ActiveRun register(String runId, String tenant, Session session, boolean approved) {
    if (refusing) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "the server is stopping and starts no new run; try again on another server or after"
              + " it restarts");
    }
    String sessionId = session == null ? null : session.id;
    ActiveRun a = new ActiveRun(runId, tenant, session, live.open(runId, tenant, sessionId));
    if (!approved) {
      active.put(runId, a);
    } else if (active.putIfAbsent(runId, a) != null) {
      throw PysandboxException.invalid("run " + runId + " is running already");
    }
    return a;
  }

  /**
   * The run is no longer in flight: its events end with how it ended (or go, for a run never
   * recorded), and whoever waits for it is told. A one-shot run is released as it ends; a session's
   * by its caller once the session's lock is released, so that whoever learns that the run ended
   * finds the session free.
   */
  void release(String runId) {
    ActiveRun a = active.remove(runId);
    if (a == null) {
      return;
    }
    RunRecord end = a.end();
    try {
      if (end == null) {
        live.drop(a.events);
      } else {
        live.ended(a.events, end);
      }
    } catch (RuntimeException e) {
      log.warn("the events of run {} could not be ended: {}", runId, e.toString());
    } finally {
      a.finished.complete(null);
    }
  }

  /** Runs in flight here (recorded {@code running}, not yet released). */
  public int count() {
    return active.size();
  }

  /** Runs in flight here that have no sandbox yet (waiting for a start or an environment). */
  public int waitingForSandbox() {
    int n = 0;
    for (ActiveRun a : active.values()) {
      if (a.sandbox() == null) {
        n++;
      }
    }
    return n;
  }

  /** The run as recorded when it began (without its code), while it is in flight here. */
  RunRecord begun(String runId) {
    ActiveRun a = active.get(runId);
    return a == null ? null : a.begun();
  }

  /**
   * Waits until the run has ended here or the time source passes {@code deadlineNanos}, looking
   * every {@link Execution#POLL_MILLIS} ms; for a run not in flight here, one look's pause.
   */
  public void awaitEnd(String runId, long deadlineNanos) {
    ActiveRun a = active.get(runId);
    if (a == null) {
      long left = deadlineNanos - clock.nanoTime();
      dev.pysandbox.util.Pause.millis(
          Math.max(0, Math.min(Execution.POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(left))));
      return;
    }
    await(a, deadlineNanos);
  }

  /**
   * Stops every run in flight from outside (the server is stopping): each is killed and ends {@code
   * interrupted} with {@code reason}; runs about to start end so at once.
   */
  public void interruptAll(String reason) {
    for (ActiveRun a : active.values()) {
      a.interrupt(reason);
      Sandbox sandbox = a.sandbox();
      if (sandbox != null) {
        sandbox.kill(reason);
      }
    }
  }

  /**
   * Cancels every run still in flight, for {@code reason} (a shutdown whose grace period ran out):
   * each sandbox is killed and each run ends {@code cancelled} with the reason.
   */
  public void cancelAll(String reason) {
    for (ActiveRun a : active.values()) {
      a.cancelBecause(reason);
      Sandbox sandbox = a.sandbox();
      if (sandbox != null) {
        KillOutcome.kill(sandbox, "cancelled");
      }
    }
  }

  /** From now on no run starts: each is refused, retryable, saying the server is stopping. */
  public void refuseNew() {
    refusing = true;
  }

  /**
   * Waits until no run is in flight, at most {@code timeoutMillis}.
   *
   * @return the ids of the runs still in flight
   */
  public List<String> awaitIdle(long timeoutMillis) {
    long deadline = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    for (ActiveRun a : List.copyOf(active.values())) {
      long left = deadline - clock.nanoTime();
      try {
        a.finished.get(Math.max(0, left), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (Exception e) {
        // still running: reported below
      }
    }
    return List.copyOf(active.keySet());
  }

  /**
   * KeyboardInterrupt first; after the grace period, SIGKILL (the session, if any, dies).
   *
   * @param reason why, for the run's record ("the client disconnected"); {@code null} for the
   *     caller's own cancel_run
   * @return {@code null} when the tenant has no such run running here
   */
  CancelResult cancel(String tenant, String runId, String reason) {
    ActiveRun a = active.get(runId);
    if (a == null || !a.tenant.equals(tenant)) {
      return null;
    }
    a.requestCancel(reason);
    Sandbox sandbox = a.sandbox();
    if (sandbox != null) {
      sandbox.worker().interrupt();
    }
    // Without a sandbox yet, the run interrupts itself as soon as its request is sent.
    if (!await(a, cancelGraceSeconds) && (sandbox = a.sandbox()) != null) {
      a.killedByCancel(true);
      if (a.session != null) {
        sessions.markDead(
            a.session,
            "killed: run "
                + runId
                + " was cancelled and did not stop within "
                + cancelGraceSeconds
                + " s");
      }
      KillOutcome.kill(sandbox, "cancelled");
      if (!await(a, 10)) {
        // The run's own thread records the end (within its collect budget, which the cancel
        // ends too); the cancel has been taken, and says so rather than fail.
        return new CancelResult(
            runId,
            true,
            RunStatus.RUNNING,
            "cancel taken: run "
                + runId
                + " was interrupted and its sandbox killed; it is still being recorded, get_run"
                + " shows how it ended");
      }
    }
    RunRecord r = store.get().get(runId, false).orElse(null);
    if (r == null) {
      return new CancelResult(runId, true, RunStatus.CANCELLED, "cancelled");
    }
    return new CancelResult(runId, true, r.status(), r.message());
  }

  /**
   * Waits at most {@code seconds} of the time source for the run to finish, looking every {@link
   * Execution#POLL_MILLIS} ms (so that a test's moved time is seen at the next look).
   */
  private boolean await(ActiveRun a, int seconds) {
    return await(a, clock.nanoTime() + TimeUnit.SECONDS.toNanos(seconds));
  }

  private boolean await(ActiveRun a, long deadline) {
    while (true) {
      long left = deadline - clock.nanoTime();
      if (left <= 0) {
        return a.finished.isDone();
      }
      try {
        a.finished.get(
            Math.min(left, TimeUnit.MILLISECONDS.toNanos(Execution.POLL_MILLIS)),
            TimeUnit.NANOSECONDS);
        return true;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      } catch (TimeoutException e) {
        // not yet: look at the time again
      } catch (ExecutionException | CancellationException e) {
        return true;
      }
    }
  }
}

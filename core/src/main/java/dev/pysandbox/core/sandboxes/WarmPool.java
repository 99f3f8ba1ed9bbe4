package dev.pysandbox.core.sandboxes;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.MetricsRecorder;
import dev.pysandbox.api.MetricsRecorder.PoolTake;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.util.Futures;
import dev.pysandbox.util.TimeSource;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sandboxes started ahead of need, so that a one-shot run or a new session does not wait for a
 * process start. Each sandbox is handed out once, unused, and never comes back: a used sandbox is
 * killed by whoever used it.
 *
 * <p>Refills in the background. A start that fails (even at once, inside {@code backend.start})
 * stops refilling: the next attempt is scheduled on the timer after a delay that doubles from
 * {@value #FIRST_RETRY_MILLIS} ms up to {@value #MAX_RETRY_MILLIS} ms and goes back to the start on
 * a success, as HikariCP's pool filler does. One failure may be a fluke, and {@link #take()} then
 * still starts a sandbox of its own; once {@value #FAIL_FAST_AFTER} starts in a row have failed it
 * fails at once with the last failure, until a start succeeds. The lock guards counters only; no
 * start, wait or log happens under it.
 */
public final class WarmPool implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(WarmPool.class);
  static final long FIRST_RETRY_MILLIS = 250;
  static final long MAX_RETRY_MILLIS = 30_000;

  /** Failed starts in a row after which {@link #take()} stops trying and fails at once. */
  static final int FAIL_FAST_AFTER = 2;

  private final SandboxBackend backend;
  private final SandboxSpec spec;
  private final int size;
  private final long startTimeoutSeconds;
  private final ScheduledExecutorService timer;
  private final TimeSource clock;
  private final MetricsRecorder metrics;
  private final LinkedBlockingDeque<Sandbox> ready = new LinkedBlockingDeque<>();
  private final PreloadErrors preloadErrors = new PreloadErrors();

  // guarded by this
  private int starting;
  private boolean closed;
  private StartFailure failure;
  private ScheduledFuture<?> retry;
  private long nextDelayMillis = FIRST_RETRY_MILLIS;

  /**
   * @param size sandboxes kept ready or starting; 0 turns the pool off
   * @param startTimeoutSeconds how long a start may take before the runner is ready
   * @param timer runs the delayed retries after failed starts
   * @param clock the time failures are reported with
   * @param metrics told of every start and every take
   */
  public WarmPool(
      SandboxBackend backend,
      SandboxSpec spec,
      int size,
      long startTimeoutSeconds,
      ScheduledExecutorService timer,
      TimeSource clock,
      MetricsRecorder metrics) {
    this.backend = backend;
    this.spec = spec;
    this.size = size;
    this.startTimeoutSeconds = startTimeoutSeconds;
    this.timer = timer;
    this.clock = clock;
    this.metrics = metrics;
  }

  public int size() {
    return size;
  }

  public int readyCount() {
    return ready.size();
  }

  /** The last failed start while starts keep failing; empty once one has succeeded. */
  public synchronized Optional<StartFailure> lastFailure() {
    return Optional.ofNullable(failure);
  }

  /**
   * Starts sandboxes until {@code size} are ready or starting, one at a time and outside the lock;
   * does nothing while a retry after a failure is scheduled.
   */
  public void refill() {
    while (true) {
      synchronized (this) {
        if (closed || retry != null || ready.size() + starting >= size) {
          return;
        }
        starting++;
      }
      startOne();
    }
  }

  /**
   * Forgets the backoff and refills at once: for the backend to call when it knows that sandboxes
   * died together and a new start may well work (its helper process died and is started anew).
   */
  public void refillNow() {
    synchronized (this) {
      if (retry != null) {
        retry.cancel(false);
        retry = null;
      }
      nextDelayMillis = FIRST_RETRY_MILLIS;
    }
    refillSoon();
  }

  /** Refills on the timer thread: callers here are a socket's reader thread or a callback. */
  private void refillSoon() {
    try {
      timer.execute(this::refill);
    } catch (RejectedExecutionException e) {
      log.debug("warm pool: not refilling, the server is shutting down");
    }
  }

  private void startOne() {
    long began = clock.nanoTime();
    backend
        .start(spec)
        .whenComplete(
            (sandbox, err) -> {
              metrics.sandboxStarted(err == null, clock.nanoTime() - began);
              if (err != null) {
                failed(err, true);
                return;
              }
              boolean keep;
              synchronized (this) {
                starting--;
                keep = !closed;
                if (keep) {
                  ready.add(sandbox);
                }
              }
              if (!keep) {
                sandbox.kill("pool closed");
                return;
              }
              sandbox.exited().thenRun(() -> discardIfUnused(sandbox));
              notePreloadErrors(sandbox);
              succeeded();
            });
  }

  /**
   * A pooled sandbox that died unused (its launcher was killed, say) is nobody else's: its
   * workspace goes now, off the thread that reported the exit.
   */
  private void discardIfUnused(Sandbox sandbox) {
    if (!ready.remove(sandbox)) {
      return;
    }
    try {
      timer.execute(() -> WorkspaceDisposal.discard(sandbox));
    } catch (RejectedExecutionException e) {
      log.debug("shutting down: sandbox {} is discarded with the backend", sandbox.id());
    }
  }

  /** A start worked: forget the failures and the backoff. */
  private void succeeded() {
    boolean wasFailing;
    synchronized (this) {
      wasFailing = failure != null;
      failure = null;
      nextDelayMillis = FIRST_RETRY_MILLIS;
      if (retry != null) {
        retry.cancel(false);
        retry = null;
      }
    }
    if (wasFailing) {
      log.info("warm pool: sandboxes start again");
      refillSoon();
    }
  }

  /**
   * A start failed: keep it for {@link #lastFailure()} and, unless one is pending, schedule the
   * next refill after the current delay, then double the delay.
   *
   * @param pooled whether it was one of the pool's own starts (counted in {@code starting})
   */
  private void failed(Throwable err, boolean pooled) {
    StartFailure f;
    boolean loud;
    synchronized (this) {
      if (pooled) {
        starting--;
      }
      if (closed) {
        return;
      }
      Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
      int consecutive = failure == null ? 1 : failure.consecutive() + 1;
      if (retry == null) {
        long delay = nextDelayMillis;
        nextDelayMillis = Math.min(MAX_RETRY_MILLIS, nextDelayMillis * 2);
        try {
          retry = timer.schedule(this::retry, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
          retry = null; // shutting down
        }
      }
      Instant retryAt =
          retry == null ? null : now.plusMillis(retry.getDelay(TimeUnit.MILLISECONDS));
      // Failures in a row are logged at 1, 2, 4, 8 ... (the rest at debug): with the delay capped
      // at 30 s, a host broken for a day logs a dozen lines, not thousands. check_setup always
      // shows the last one.
      loud = Integer.bitCount(consecutive) == 1;
      f = new StartFailure(rootMessage(err), now, consecutive, retryAt, err);
      failure = f;
    }
    if (loud) {
      log.warn("{}", f.describe(f.at()));
    } else {
      log.debug("{}", f.describe(f.at()));
    }
  }

  private void retry() {
    synchronized (this) {
      retry = null;
    }
    refill();
  }

  /** A fresh sandbox like the pool's own (the default tier, its limits). */
  Sandbox take() {
    return take(spec);
  }

  /**
   * A fresh sandbox: a pooled one when one is ready and the pool's sandboxes are what is wanted
   * (same tier, same limits), else one started now.
   *
   * @throws PysandboxException {@code backend_unavailable} when none can be started, at once while
   *     the pool's starts keep failing
   */
  public Sandbox take(SandboxSpec wanted) {
    long began = clock.nanoTime();
    if (size == 0 || !wanted.equals(spec)) {
      // not the pool's kind: nothing to retry or report
      Sandbox started = startNow(wanted);
      metrics.sandboxTaken(
          size == 0 ? PoolTake.STARTED : PoolTake.NOT_POOLED, clock.nanoTime() - began);
      return started;
    }
    Sandbox s;
    while ((s = ready.pollFirst()) != null) {
      if (s.worker().isOpen()) {
        refill();
        metrics.sandboxTaken(PoolTake.READY, clock.nanoTime() - began);
        return s;
      }
    }
    StartFailure f = lastFailure().orElse(null);
    if (f != null && f.consecutive() >= FAIL_FAST_AFTER) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "cannot start a sandbox: " + f.describe(clock.instant()),
          f.cause());
    }
    refill();
    Sandbox started;
    try {
      started = startNow(spec);
    } catch (PysandboxException e) {
      if (e.code() == ErrorCode.BACKEND_UNAVAILABLE) {
        failed(e, false);
      }
      throw e;
    }
    notePreloadErrors(started);
    succeeded();
    metrics.sandboxTaken(PoolTake.STARTED, clock.nanoTime() - began);
    return started;
  }

  /**
   * Modules of {@code pool_preload} the runner could not import (a misspelt name, a missing
   * package), by module, from the last sandbox that reported any; empty when all imported.
   */
  public Map<String, String> preloadErrors() {
    return preloadErrors.last();
  }

  /**
   * A failed preload is no failed start (the code imports what it needs), but it is logged once per
   * distinct set of errors and reported by check_setup.
   */
  private void notePreloadErrors(Sandbox sandbox) {
    Map<String, String> fresh = preloadErrors.note(sandbox);
    if (fresh != null) {
      log.warn(
          "pool_preload: the sandbox's runner could not import {} (sandbox {}); sandboxes start"
              + " without them",
          fresh,
          sandbox.id());
    }
  }

  /**
   * A sandbox of {@code wanted} started now, for a spare kept ahead of need (a sandbox start, not a
   * take: the take is the spare's when it is handed out).
   *
   * @throws PysandboxException {@code backend_unavailable} when it cannot be started
   */
  public Sandbox start(SandboxSpec wanted) {
    return startNow(wanted);
  }

  private Sandbox startNow(SandboxSpec wanted) {
    long began = clock.nanoTime();
    boolean ok = false;
    try {
      Sandbox s = backend.start(wanted).get(startTimeoutSeconds + 5, TimeUnit.SECONDS);
      ok = true;
      return s;
    } catch (ExecutionException | CompletionException e) {
      if (Futures.unwrap(e) instanceof PysandboxException p) {
        throw p;
      }
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "cannot start a sandbox: " + rootMessage(e), e);
    } catch (TimeoutException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "no sandbox became ready within " + (startTimeoutSeconds + 5) + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted while starting a sandbox", e);
    } finally {
      metrics.sandboxStarted(ok, clock.nanoTime() - began);
    }
  }

  static String rootMessage(Throwable t) {
    return String.valueOf(Futures.unwrap(t).getMessage());
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      if (retry != null) {
        retry.cancel(false);
        retry = null;
      }
    }
    Sandbox s;
    while ((s = ready.pollFirst()) != null) {
      s.kill("pool closed");
    }
  }
}

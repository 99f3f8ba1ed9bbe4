package dev.pysandbox.core;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.Limits;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxSpec;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sandboxes started ahead of need, so that a one-shot run or a new session does not wait for a
 * process start. Each sandbox is handed out once, unused, and never comes back: a used sandbox is
 * killed by whoever used it. Refills in the background; after a failed start it waits before trying
 * again, so a broken host does not spin.
 */
final class WarmPool implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(WarmPool.class);
  private static final long RETRY_AFTER_FAILURE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final SandboxBackend backend;
  private final SandboxSpec spec;
  private final int size;
  private final long startTimeoutSeconds;
  private final LinkedBlockingDeque<Sandbox> ready = new LinkedBlockingDeque<>();
  private int starting;
  private long lastFailure;
  private boolean closed;

  WarmPool(SandboxBackend backend, SandboxSpec spec, int size, long startTimeoutSeconds) {
    this.backend = backend;
    this.spec = spec;
    this.size = size;
    this.startTimeoutSeconds = startTimeoutSeconds;
  }

  int size() {
    return size;
  }

  int readyCount() {
    return ready.size();
  }

  /** Starts sandboxes until {@code size} are ready or starting. */
  synchronized void refill() {
    if (closed) {
      return;
    }
    if (lastFailure != 0 && System.nanoTime() - lastFailure < RETRY_AFTER_FAILURE_NANOS) {
      return;
    }
    while (ready.size() + starting < size) {
      starting++;
      backend
          .start(spec)
          .whenComplete(
              (sandbox, err) -> {
                boolean keep;
                synchronized (this) {
                  starting--;
                  if (err != null) {
                    lastFailure = System.nanoTime();
                  } else {
                    lastFailure = 0;
                  }
                  keep = err == null && !closed;
                  if (keep) {
                    ready.add(sandbox);
                  }
                }
                if (err != null) {
                  log.warn("warm pool: a sandbox failed to start: {}", rootMessage(err));
                } else if (!keep) {
                  sandbox.kill("pool closed");
                } else {
                  sandbox.exited().thenRun(() -> ready.remove(sandbox));
                }
              });
    }
  }

  /** A fresh sandbox with the server's default limits. */
  Sandbox take() {
    return take(spec.limits());
  }

  /**
   * A fresh sandbox: a pooled one when one is ready and has these limits, else one started now.
   *
   * @throws PysandboxException {@code backend_unavailable} when none can be started
   */
  Sandbox take(Limits limits) {
    if (!limits.equals(spec.limits())) {
      return startNow(spec.withLimits(limits));
    }
    Sandbox s;
    while ((s = ready.pollFirst()) != null) {
      if (s.worker().isOpen()) {
        refill();
        return s;
      }
    }
    refill();
    return startNow(spec);
  }

  private Sandbox startNow(SandboxSpec wanted) {
    try {
      return backend.start(wanted).get(startTimeoutSeconds + 5, TimeUnit.SECONDS);
    } catch (ExecutionException | CompletionException e) {
      if (e.getCause() instanceof PysandboxException p) {
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
    }
  }

  static String rootMessage(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    return c.getMessage();
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    Sandbox s;
    while ((s = ready.pollFirst()) != null) {
      s.kill("pool closed");
    }
  }
}

package dev.pysandbox.core.host;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.Futures;
import dev.pysandbox.util.TimeSource;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The run store as the core uses it: opened in the background (a client gets its tool list first),
 * waited for by the calls that need it, and opened again when opening failed (a migration that lost
 * a race, a full disk) once {@link #RETRY_NANOS} have passed, instead of failing every call until a
 * restart. {@link #problem()} tells check_setup the truth.
 */
public final class StoreHandle {
  private static final Logger log = LoggerFactory.getLogger(StoreHandle.class);
  static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(2);

  private final Supplier<RunStore> opener;
  private final Executor executor;
  private final TimeSource time;
  private CompletableFuture<RunStore> current;
  private long failedAt;
  private boolean failed;

  public StoreHandle(Supplier<RunStore> opener, Executor executor, TimeSource time) {
    this.opener = opener;
    this.executor = executor;
    this.time = time;
  }

  /** Starts opening the store (once). */
  public synchronized void open() {
    if (current == null) {
      current = CompletableFuture.supplyAsync(opener, executor);
    }
  }

  /**
   * The store, waiting while it opens.
   *
   * @throws PysandboxException {@code store_unavailable} when it cannot be opened
   */
  public RunStore get() {
    CompletableFuture<RunStore> f;
    synchronized (this) {
      open();
      if (current.isCompletedExceptionally()
          && failed
          && time.nanoTime() - failedAt > RETRY_NANOS) {
        log.info("opening the run store again");
        current = CompletableFuture.supplyAsync(opener, executor);
        failed = false;
      }
      f = current;
    }
    try {
      return f.join();
    } catch (CompletionException e) {
      boolean first;
      synchronized (this) {
        first = f == current && !failed;
        if (first) {
          failed = true;
          failedAt = time.nanoTime();
        }
      }
      Throwable cause = Futures.unwrap(e);
      if (first) {
        // Once per failed opening, with its cause; retries and check_setup say it again.
        log.warn("the run store cannot be opened: {}", cause.getMessage(), cause);
      }
      if (cause instanceof PysandboxException p) {
        throw p;
      }
      throw new PysandboxException(
          ErrorCode.STORE_UNAVAILABLE, "run store unavailable: " + cause, e);
    }
  }

  /** The store if it is open now, without waiting. */
  public synchronized Optional<RunStore> ifOpen() {
    if (current == null || !current.isDone() || current.isCompletedExceptionally()) {
      return Optional.empty();
    }
    return Optional.of(current.join());
  }

  /** Why the store cannot be used, or empty (also while it is still opening). */
  public synchronized Optional<String> problem() {
    if (current == null || !current.isCompletedExceptionally()) {
      return Optional.empty();
    }
    try {
      current.join();
      return Optional.empty();
    } catch (CompletionException e) {
      return Optional.of("run store: " + Futures.unwrap(e).getMessage() + " (retried on use)");
    }
  }
}

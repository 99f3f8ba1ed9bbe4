package dev.pysandbox.core.host;

import dev.pysandbox.util.DaemonThreads;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core's shared threads: an unbounded pool for blocking work (opening the store, starting and
 * killing sandboxes, collecting files) and one timer (session expiry, retries, polls). Neither
 * starts a thread before it is first used, so a core that only reads costs none.
 */
public final class CorePools {
  private static final Logger log = LoggerFactory.getLogger(CorePools.class);

  public final ExecutorService blocking;
  public final ScheduledExecutorService timer;

  public CorePools() {
    this.blocking =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            60,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            DaemonThreads.numbered("pysandbox-worker-"),
            // After close, late clean-up (a killed sandbox's exit hook, say) is dropped: the
            // process is going, and close() has already removed what it would have.
            (task, pool) -> log.debug("dropped a task submitted after shutdown: {}", task));
    this.timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("pysandbox-timer"));
  }

  /** Stops the blocking pool, waiting at most {@code millis} for what it is doing. */
  public void stopBlocking(long millis) {
    blocking.shutdown();
    awaitTermination(blocking, millis);
  }

  public static void awaitTermination(ExecutorService pool, long millis) {
    try {
      pool.awaitTermination(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

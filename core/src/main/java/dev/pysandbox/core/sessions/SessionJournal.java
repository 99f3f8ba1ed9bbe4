package dev.pysandbox.core.sessions;

import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.core.host.CorePools;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.DaemonThreads;
import dev.pysandbox.util.TimeSource;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes each session's state to the store's {@code sessions} table, in order, off the caller's
 * path, so that {@code pysandbox sessions} in another process can list them. A change of state is
 * written at once; mere use (run count, last use) at most every 2 s per session, so that a busy
 * session does not cost a store write per call. A session's end is written before the call that
 * ended it answers: another server sharing the data directory answers the id as ended (not as busy
 * in this one) as soon as the caller has heard it is closed.
 */
public final class SessionJournal {
  private static final Logger log = LoggerFactory.getLogger(SessionJournal.class);
  private static final long THROTTLE_SECONDS = 2;

  /** The longest a closing call waits for its session's end to be written. */
  private static final long END_WRITE_WAIT_SECONDS = 10;

  private final Supplier<RunStore> store;
  private final String instanceId;
  private final ScheduledExecutorService timer;
  private final ExecutorService writer =
      Executors.newSingleThreadExecutor(DaemonThreads.named("pysandbox-journal"));

  private final TimeSource time;

  public SessionJournal(
      Supplier<RunStore> store,
      String instanceId,
      ScheduledExecutorService timer,
      TimeSource time) {
    this.store = store;
    this.instanceId = instanceId;
    this.timer = timer;
    this.time = time;
  }

  /** Records the session's state now, or within 2 s when only its use changed. */
  public void record(Session s) {
    SessionState state = s.state();
    if (!s.recordNow(state, time.nanoTime(), TimeUnit.SECONDS.toNanos(THROTTLE_SECONDS))) {
      if (s.scheduleRecord()) {
        timer.schedule(() -> write(s), THROTTLE_SECONDS, TimeUnit.SECONDS);
      }
      return;
    }
    write(s);
  }

  private void write(Session s) {
    s.recorded();
    SessionInfo info = s.info();
    Future<?> written;
    try {
      written =
          writer.submit(
              () -> {
                try {
                  store.get().saveSession(s.tenant, info, instanceId);
                } catch (RuntimeException e) {
                  log.warn("could not record session {}: {}", s.key(), e.getMessage());
                }
              });
    } catch (RejectedExecutionException e) {
      return; // closing: what is queued is written by close()
    }
    if (info.state() == SessionState.CLOSED) {
      awaitWritten(s, written);
    }
  }

  private static void awaitWritten(Session s, Future<?> written) {
    try {
      written.get(END_WRITE_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      log.warn("the end of session {} is not recorded yet: {}", s.key(), e.toString());
    }
  }

  /** Writes what is queued, waiting at most {@code millis}. */
  public void close(long millis) {
    writer.shutdown();
    CorePools.awaitTermination(writer, millis);
  }
}

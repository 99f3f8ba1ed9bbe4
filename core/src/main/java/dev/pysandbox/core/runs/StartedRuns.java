package dev.pysandbox.core.runs;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.util.Futures;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs that go on without their caller ({@code async_mode}, a streamed REST run): the run is made
 * on one of the core's threads exactly as a waiting caller's would be, and the caller gets its
 * record as soon as it is recorded — or the error that kept it from starting ({@code session_busy},
 * …), since the session's lock is taken on that thread before the run begins. At most {@link
 * SandboxService#MAX_STARTED_RUNS} at once, each holding a thread while it runs (as a waiting
 * caller's run holds the caller's).
 */
public final class StartedRuns {
  private static final Logger log = LoggerFactory.getLogger(StartedRuns.class);

  private final Executor executor;
  private final InFlightRuns runs;
  private final Semaphore slots = new Semaphore(SandboxService.MAX_STARTED_RUNS);

  public StartedRuns(Executor executor, InFlightRuns runs) {
    this.executor = executor;
    this.runs = runs;
  }

  /**
   * @param run makes the run, telling the listener it is given when it has begun
   * @return the run as recorded when it began
   */
  RunRecord start(RunListener listener, Function<RunListener, RunRecord> run) {
    if (!slots.tryAcquire()) {
      throw new PysandboxException(
          ErrorCode.RATE_LIMITED,
          SandboxService.MAX_STARTED_RUNS
              + " runs started without waiting are still running on this server; wait for one"
              + " to end (get_run with wait_seconds) or run this one and wait for it");
    }
    CompletableFuture<RunRecord> begun = new CompletableFuture<>();
    RunListener relay =
        new RelayListener() {
          @Override
          public RunListener listener() {
            return listener;
          }

          @Override
          public void started(String runId) {
            listener.started(runId);
            RunRecord b = runs.begun(runId);
            if (b != null) {
              begun.complete(b);
            } // else a run held for approval: it is answered as the call returns it, below
          }
        };
    Map<String, String> context = MDC.getCopyOfContextMap();
    try {
      executor.execute(
          () -> {
            if (context != null) {
              MDC.setContextMap(context);
            }
            try {
              RunRecord r = run.apply(relay);
              begun.complete(r);
            } catch (RuntimeException | Error e) {
              if (!begun.completeExceptionally(e)) {
                log.debug("a started run failed after it began: {}", e.toString());
              }
            } finally {
              MDC.clear();
              slots.release();
            }
          });
    } catch (RejectedExecutionException e) {
      slots.release();
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "the server is stopping and starts no new run");
    }
    try {
      return begun.get();
    } catch (ExecutionException e) {
      Throwable cause = Futures.unwrap(e);
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      throw new PysandboxException(ErrorCode.INTERNAL, "the run could not start: " + cause, cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted while the run started", e);
    }
  }
}

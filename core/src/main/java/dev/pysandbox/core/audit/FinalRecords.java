package dev.pysandbox.core.audit;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.TimeSource;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a run's final state, and makes sure one is written: a store that cannot take it now (a
 * full disk) gets it again later; a store that refuses it for what it holds (what the sandbox sent)
 * gets it without that, as {@code failed}, saying why. A run is never left {@code running} because
 * its end could not be recorded as it was.
 */
public final class FinalRecords {
  private static final Logger log = LoggerFactory.getLogger(FinalRecords.class);

  private final Supplier<RunStore> store;
  private final TimeSource clock;
  private final Consumer<RunRecord> finished;
  private final Queue<RunRecord> deferred = new ConcurrentLinkedQueue<>();

  /**
   * @param finished told of each run recorded (notebooks, metrics); its failures are logged only
   */
  public FinalRecords(Supplier<RunStore> store, TimeSource clock, Consumer<RunRecord> finished) {
    this.store = store;
    this.clock = clock;
    this.finished = finished;
  }

  /**
   * Stores the final state and returns what callers see (without the code). When the store cannot
   * take it now (a full disk, say), the run still answers its caller, and its final state is kept
   * and written again until the store takes it ({@link #retryDeferred}).
   */
  public RunRecord finish(String runId, RunRecord.Builder run) {
    RunRecord r =
        run.finishedAt(clock.instant().toString()).viewCommand(viewCommand(runId)).build();
    try {
      store.get().finish(r);
    } catch (PysandboxException e) {
      if (e.code() != ErrorCode.STORE_UNAVAILABLE && e.code() != ErrorCode.DISK_FULL) {
        r = finishStripped(r, e);
      } else {
        deferred.add(r);
        log.warn(
            "run {} ended {} but the store could not record it ({}); it is kept and written again"
                + " when the store recovers",
            r.runId(),
            r.status().wireName(),
            e.getMessage());
        return r.toBuilder().code(null).build();
      }
    } catch (RuntimeException | StackOverflowError e) {
      r = finishStripped(r, e);
    }
    announce(r);
    return r.toBuilder().code(null).build();
  }

  private void announce(RunRecord r) {
    try {
      finished.accept(r);
    } catch (RuntimeException e) {
      log.warn("run {}: what follows its end failed: {}", r.runId(), e.toString());
    }
  }

  /**
   * The store refused the run's final state for what it holds (what the sandbox sent): the run is
   * recorded failed without that, saying why, so that it never stays {@code running}.
   */
  private RunRecord finishStripped(RunRecord r, Throwable why) {
    log.error(
        "run {}: its final state could not be stored; storing it without its results",
        r.runId(),
        why);
    String message =
        "the run ended "
            + r.status().wireName()
            + " but its record could not be stored ("
            + failureMessage(why)
            + "); it is stored without its result, displays and __outputs__";
    RunRecord stripped =
        r.toBuilder()
            .status(RunStatus.FAILED)
            .message(message)
            .error(new ErrorInfo("RecordFailed", message, null))
            .result(null)
            .displays(List.of())
            .outputs(Map.of())
            .outputsNonJson(List.of())
            .build();
    store.get().finish(stripped);
    return stripped;
  }

  /**
   * Writes the final states the store could not take when their runs ended.
   *
   * @return how many are still waiting
   */
  public int retryDeferred() {
    RunRecord r;
    int attempts = deferred.size();
    for (int i = 0; i < attempts && (r = deferred.poll()) != null; i++) {
      try {
        store.get().finish(r);
        announce(r);
        log.info("run {} recorded as {} after the store recovered", r.runId(), r.status());
      } catch (PysandboxException e) {
        deferred.add(r);
        return deferred.size();
      }
    }
    return deferred.size();
  }

  /** The command that shows a run, as its record carries it. */
  public static String viewCommand(String runId) {
    return "pysandbox runs open " + runId;
  }

  /** A failure of the server's own, in words: the backend's message, or the exception itself. */
  public static String failureMessage(Throwable e) {
    if (e instanceof PysandboxException p && p.code() == ErrorCode.BACKEND_UNAVAILABLE) {
      return "the sandbox could not take the run: " + p.getMessage();
    }
    if (e instanceof StackOverflowError) {
      return "internal error: what the run sent back was too deeply nested for the server to"
          + " handle (StackOverflowError); its output, result and __outputs__ are not kept";
    }
    return "internal error: " + (e.getMessage() == null ? e.toString() : e.getMessage());
  }
}

package dev.pysandbox.core.audit;

import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.files.NativeFs;
import dev.pysandbox.core.host.CorePools;
import dev.pysandbox.notebook.NotebookFiles;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.DaemonThreads;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to runs after they finish: each finished run's notebooks ({@code
 * runs/<id>/notebook.ipynb} and {@code notebook.py}) are written and its record sealed into the
 * hash chain, both by one background thread, off the run's path; at start-up the runs a crash left
 * unsealed are sealed and the notebooks missing for recent runs are written. What a reviewer does
 * with the runs (delete, purge, export, verify) is {@link AuditReview}'s.
 */
public final class AuditTrail implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AuditTrail.class);

  /** Runs sealed per transaction. */
  private static final int SEAL_BATCH = 500;

  /** Recent runs whose notebooks start-up writes when they are missing. */
  private static final int BACKFILL_RUNS = 10_000;

  /**
   * Seconds between looks for unsealed runs when none finished here: runs that other processes
   * finished (a CLI one-shot run, the runs of a dead server marked interrupted) are sealed by then.
   */
  private static final int LOOK_EVERY_SECONDS = 30;

  /** Finished runs waiting for their notebooks; past this, start-up writes the rest. */
  private static final int QUEUE_CAPACITY = 4096;

  /** The most a notebook read back for {@code get_run} may be. */
  private static final long NOTEBOOK_READ_MAX_BYTES = 64L << 20;

  private final DataLayout layout;
  private final Supplier<RunStore> store;
  private final boolean notebooks;
  // At nice 19: writing notebooks (file creation and renames, journalled by the file system) is
  // work that must not take the CPU from runs on a small machine.
  private final ExecutorService worker =
      Executors.newSingleThreadExecutor(
          r ->
              DaemonThreads.newThread(
                  "pysandbox-audit",
                  () -> {
                    NativeFs.backgroundPriority();
                    r.run();
                  }));
  private final BlockingQueue<String> pending = new ArrayBlockingQueue<>(QUEUE_CAPACITY);
  private final AtomicBoolean draining = new AtomicBoolean();
  private final AtomicBoolean sealing = new AtomicBoolean();
  // Set when a run finished here (or sealing failed): the next second's tick seals. Otherwise the
  // store is asked only every LOOK_EVERY_SECONDS, so an idle server neither wakes for nothing nor
  // reads the store every second (each read writes SQLite's shared memory, see StoreFiles).
  private final AtomicBoolean unsealed = new AtomicBoolean(true);
  private int ticksSinceLook;
  // Set when the queue was full: once it has drained, the recent runs are looked over again.
  private final AtomicBoolean missed = new AtomicBoolean();
  private final Object[] runLocks = new Object[64];
  private volatile boolean closed;
  // Set when close() has waited long enough: the writer stops after the notebook in hand, so that
  // nothing writes into the data directory once close() has returned (the next start writes the
  // rest).
  private volatile boolean stopped;

  /**
   * @param notebooks write each finished run's notebooks (else only when asked for)
   */
  public AuditTrail(DataLayout layout, Supplier<RunStore> store, boolean notebooks) {
    this.layout = layout;
    this.store = store;
    this.notebooks = notebooks;
    for (int i = 0; i < runLocks.length; i++) {
      runLocks[i] = new Object();
    }
  }

  /** Seals what is unsealed and writes missing notebooks now, then seals every second. */
  public void start(ScheduledExecutorService timer) {
    worker.execute(this::catchUp);
    timer.scheduleWithFixedDelay(this::sealSoon, 1, 1, TimeUnit.SECONDS);
  }

  /** Finished runs whose notebooks are still to be written by the background writer. */
  public int queued() {
    return pending.size();
  }

  /** A run has finished (and is recorded): its notebooks are written soon. */
  public void finished(String runId) {
    unsealed.set(true);
    if (closed || !notebooks) {
      return;
    }
    if (!pending.offer(runId)) {
      missed.set(true);
      log.debug("notebook queue full; {} is written once it has drained", runId);
      return;
    }
    if (draining.compareAndSet(false, true)) {
      submit(this::drain);
    }
  }

  private void submit(Runnable task) {
    try {
      worker.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing
    }
  }

  // A periodic task never runs twice at once, and each run sees the last one's writes.
  private void sealSoon() {
    if (++ticksSinceLook < LOOK_EVERY_SECONDS && !unsealed.get()) {
      return;
    }
    if (!closed && sealing.compareAndSet(false, true)) {
      ticksSinceLook = 0;
      unsealed.set(false);
      submit(
          () -> {
            sealing.set(false);
            sealAll();
          });
    }
  }

  private void drain() {
    draining.set(false);
    String id;
    while (!stopped && (id = pending.poll()) != null) {
      try {
        writeNotebooks(id);
      } catch (RuntimeException | IOException e) {
        log.warn("could not write the notebooks of {}: {}", id, e.toString());
      }
    }
    if (!closed && missed.compareAndSet(true, false)) {
      writeMissing();
    }
  }

  private void catchUp() {
    sealAll();
    writeMissing();
  }

  /** Writes the notebooks missing among the recently finished runs. */
  private void writeMissing() {
    if (!notebooks) {
      return;
    }
    int written = 0;
    try {
      for (String id : store.get().finishedIds(BACKFILL_RUNS)) {
        if (closed) {
          return;
        }
        if (!NotebookFiles.present(runDir(id)) && writeNotebooks(id)) {
          written++;
        }
      }
    } catch (RuntimeException | IOException e) {
      log.warn("could not write the missing notebooks: {}", e.toString());
    }
    if (written > 0) {
      log.info("wrote the notebooks of {} runs that had none", written);
    }
  }

  /** Seals every finished run not sealed yet. */
  void sealAll() {
    try {
      int n;
      do {
        n = store.get().seal(SEAL_BATCH);
      } while (n == SEAL_BATCH && !closed);
    } catch (PysandboxException e) {
      unsealed.set(true);
      log.warn("sealing finished runs failed (retried in a second): {}", e.getMessage());
    }
  }

  /** Writes a finished run's notebooks; false when there is no such finished run. */
  private boolean writeNotebooks(String runId) throws IOException {
    synchronized (lockOf(runId)) {
      RunRecord r = store.get().get(runId, true).orElse(null);
      if (r == null || r.finishedAt() == null) {
        return false;
      }
      NotebookFiles.write(runDir(runId), r);
      return true;
    }
  }

  /**
   * The lock a run's notebooks are written under; deleting the run takes it too ({@link
   * AuditReview}), so that no notebook is written into a directory being removed.
   */
  Object lockOf(String runId) {
    return runLocks[Math.floorMod(runId.hashCode(), runLocks.length)];
  }

  Path runDir(String runId) {
    return layout.runsDir().resolve(Ids.requireRunId(runId));
  }

  // -- notebooks on request ----------------------------------------------------------------------

  /**
   * {@code run} with its notebook's source and paths (written now if they are not yet); a run still
   * running has none.
   */
  public RunRecord withNotebook(RunRecord run) {
    if (run.finishedAt() == null) {
      return run;
    }
    Path dir = runDir(run.runId());
    try {
      if (!NotebookFiles.present(dir)) {
        writeNotebooks(run.runId());
      }
      Path py = dir.resolve(NotebookFiles.PY);
      Path ipynb = dir.resolve(NotebookFiles.IPYNB);
      return run.toBuilder()
          .notebookSource(readBounded(py))
          .notebookPyPath(py.toString())
          .notebookIpynbPath(ipynb.toString())
          .viewCommand(viewCommand(py, ipynb))
          .build();
    } catch (IOException e) {
      throw PysandboxException.writeFailed(
          "the notebook of " + run.runId() + " could not be written or read", e);
    }
  }

  /** How a person opens a notebook: marimo for the .py, Jupyter for the .ipynb. */
  static String viewCommand(Path py, Path ipynb) {
    return "marimo edit " + py + "  (or: jupyter notebook " + ipynb + ")";
  }

  private static String readBounded(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
      byte[] data = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, NOTEBOOK_READ_MAX_BYTES));
      return new String(data, StandardCharsets.UTF_8);
    }
  }

  /** How long closing waits for the notebooks of runs that just finished. */
  private static final long CLOSE_WAIT_MILLIS = 2000;

  /**
   * Writes the notebooks still queued (waiting at most {@value #CLOSE_WAIT_MILLIS} ms; the next
   * start writes what is left) and stops: when it returns, the writer has finished (or, stuck in
   * the file system, waited for another {@value #CLOSE_WAIT_MILLIS} ms).
   */
  @Override
  public void close() {
    closed = true;
    submit(this::drain);
    worker.shutdown();
    CorePools.awaitTermination(worker, CLOSE_WAIT_MILLIS);
    if (!worker.isTerminated()) {
      stopped = true;
      CorePools.awaitTermination(worker, CLOSE_WAIT_MILLIS);
    }
  }
}

package dev.pysandbox.core;

import dev.pysandbox.api.DeleteResult;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PurgeResult;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionExport;
import dev.pysandbox.api.VerifyReport;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.notebook.NotebookFiles;
import dev.pysandbox.notebook.Notebooks;
import dev.pysandbox.store.ChainLink;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.StoredRun;
import dev.pysandbox.util.DaemonThreads;
import dev.pysandbox.util.DurableFiles;
import dev.pysandbox.util.TimeSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * What happens to runs after they finish, and what a reviewer does with them: each finished run's
 * notebooks ({@code runs/<id>/notebook.ipynb} and {@code notebook.py}) are written and its record
 * sealed into the hash chain, both by one background thread, off the run's path; at start-up the
 * runs a crash left unsealed are sealed and the notebooks missing for recent runs are written.
 * Deleting, purging, exporting a session and verifying the chain are here too.
 */
final class AuditTrail implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AuditTrail.class);

  /** Runs sealed per transaction. */
  private static final int SEAL_BATCH = 500;

  /** Recent runs whose notebooks start-up writes when they are missing. */
  private static final int BACKFILL_RUNS = 10_000;

  /** Finished runs waiting for their notebooks; past this, start-up writes the rest. */
  private static final int QUEUE_CAPACITY = 4096;

  /** The most a notebook read back for {@code get_run} may be. */
  private static final long NOTEBOOK_READ_MAX_BYTES = 64L << 20;

  private static final DateTimeFormatter EXPORT_STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

  private final DataLayout layout;
  private final Supplier<RunStore> store;
  private final TimeSource time;
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
  // Set when the queue was full: once it has drained, the recent runs are looked over again.
  private final AtomicBoolean missed = new AtomicBoolean();
  private final Object[] runLocks = new Object[64];
  private volatile boolean closed;

  /**
   * @param notebooks write each finished run's notebooks (else only when asked for)
   */
  private final KeptBlobs blobs;

  AuditTrail(DataLayout layout, Supplier<RunStore> store, TimeSource time, boolean notebooks) {
    this.layout = layout;
    this.store = store;
    this.time = time;
    this.notebooks = notebooks;
    this.blobs = new KeptBlobs(layout, store);
    for (int i = 0; i < runLocks.length; i++) {
      runLocks[i] = new Object();
    }
  }

  /** Seals what is unsealed and writes missing notebooks now, then seals every second. */
  void start(ScheduledExecutorService timer) {
    worker.execute(this::catchUp);
    timer.scheduleWithFixedDelay(this::sealSoon, 1, 1, TimeUnit.SECONDS);
  }

  /** Finished runs whose notebooks are still to be written by the background writer. */
  int queued() {
    return pending.size();
  }

  /** A run has finished (and is recorded): its notebooks are written soon. */
  void finished(String runId) {
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

  private void sealSoon() {
    if (!closed && sealing.compareAndSet(false, true)) {
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
    while ((id = pending.poll()) != null) {
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

  private Object lockOf(String runId) {
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
  RunRecord withNotebook(RunRecord run) {
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

  // -- delete and purge --------------------------------------------------------------------------

  DeleteResult delete(String tenant, RunRecord run, boolean deleteFiles, String reason) {
    if (run.status() == RunStatus.AWAITING_APPROVAL) {
      throw PysandboxException.invalid(
          "run "
              + run.runId()
              + " awaits approval "
              + run.approvalId()
              + ": deny it (pysandbox approvals deny) or let it expire before deleting it");
    }
    if (run.status() == RunStatus.RUNNING || run.finishedAt() == null) {
      throw PysandboxException.invalid(
          "run "
              + run.runId()
              + " is "
              + run.status().wireName()
              + ": cancel it (cancel_run) or wait for it to end before deleting it");
    }
    synchronized (lockOf(run.runId())) {
      if (!deleteFiles) {
        // Before the record goes: its files stay on disk where they always were.
        blobs.restore(run.runId(), layout.runFiles(run.runId()));
      }
      StoredRun gone =
          store
              .get()
              .delete(tenant, run.runId(), reason)
              .orElseThrow(
                  () ->
                      new PysandboxException(
                          ErrorCode.NOT_FOUND, "no finished run with id '" + run.runId() + "'"));
      long files = 0;
      if (deleteFiles) {
        Path dir = runDir(run.runId());
        files = treeBytes(dir);
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
          WorkspaceFiles.deleteTree(dir);
        }
      }
      // A blob another run still references stays; what the tenant's storage shrank by counts.
      long freed = blobs.release(tenant, run.runId());
      files += deleteFiles ? freed : 0;
      return new DeleteResult(run.runId(), true, deleteFiles, files, gone.recordBytes());
    }
  }

  PurgeResult purge(String tenant, int olderThanDays, RunStatus status, boolean dryRun) {
    if (olderThanDays < 0 || olderThanDays > PurgeResult.MAX_DAYS) {
      throw PysandboxException.invalid(
          "older_than_days must be 0.." + PurgeResult.MAX_DAYS + ", not " + olderThanDays);
    }
    if (status == RunStatus.RUNNING) {
      throw PysandboxException.invalid("running runs are never purged: cancel them first");
    }
    Instant before = time.instant().minus(Duration.ofDays(olderThanDays));
    List<StoredRun> chosen =
        store.get().finishedBefore(tenant, before, status, PurgeResult.MAX_RUNS_PER_CALL + 1);
    boolean more = chosen.size() > PurgeResult.MAX_RUNS_PER_CALL;
    if (more) {
      chosen = chosen.subList(0, PurgeResult.MAX_RUNS_PER_CALL);
    }
    long files = 0;
    long records = 0;
    long runs = 0;
    List<String> ids = new ArrayList<>();
    List<String> counted = new ArrayList<>();
    String reason = "purge_runs older_than_days=" + olderThanDays;
    for (StoredRun r : chosen) {
      long dirBytes = treeBytes(runDir(r.runId()));
      if (!dryRun) {
        synchronized (lockOf(r.runId())) {
          if (store.get().delete(tenant, r.runId(), reason).isEmpty()) {
            continue; // deleted meanwhile by someone else
          }
          WorkspaceFiles.deleteTree(runDir(r.runId()));
          dirBytes += blobs.release(tenant, r.runId());
        }
      }
      runs++;
      counted.add(r.runId());
      files += dirBytes;
      records += r.recordBytes();
      if (ids.size() < PurgeResult.MAX_IDS_LISTED) {
        ids.add(r.runId());
      }
    }
    if (dryRun) {
      files += blobs.index().freedBy(tenant, counted);
    } else {
      blobs
          .index()
          .sweep(blobs::deleteFile); // what a crash between a deletion and its release left
    }
    return new PurgeResult(
        dryRun,
        olderThanDays,
        status == null ? null : status.wireName(),
        runs,
        files,
        records,
        files + records,
        ids,
        more);
  }

  /** Bytes of the regular files under {@code dir}, links not followed; 0 when it is missing. */
  private static long treeBytes(Path dir) {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    long[] total = {0};
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
              if (attrs.isRegularFile()) {
                total[0] += attrs.size();
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      log.debug("could not measure {}: {}", dir, e.toString());
    }
    return total[0];
  }

  // -- export ------------------------------------------------------------------------------------

  SessionExport export(String tenant, String sessionId, String format) {
    Ids.requireSessionId(sessionId);
    boolean ipynb;
    if ("ipynb".equals(format)) {
      ipynb = true;
    } else if ("marimo".equals(format)) {
      ipynb = false;
    } else {
      throw PysandboxException.invalid("format must be ipynb or marimo, not '" + format + "'");
    }
    List<RunRecord> runs = store.get().sessionRuns(tenant, sessionId, SessionExport.MAX_RUNS);
    List<dev.pysandbox.api.SessionStep> steps =
        store.get().sessionSteps(tenant, sessionId, SessionExport.MAX_RUNS);
    if (runs.isEmpty() && steps.isEmpty()) {
      throw new PysandboxException(
          ErrorCode.NOT_FOUND, "session '" + sessionId + "' has no recorded run");
    }
    String title = "Session " + sessionId;
    String text =
        ipynb ? Notebooks.ipynb(runs, steps, title) : Notebooks.marimo(runs, steps, title);
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    Path dir = layout.dataDir().resolve("exports").resolve(tenant);
    String name =
        sessionId + "-" + EXPORT_STAMP.format(time.instant()) + (ipynb ? ".ipynb" : ".py");
    Path file = dir.resolve(name);
    try {
      Files.createDirectories(dir);
      DurableFiles.write(
          file,
          bytes.length,
          DurableFiles.bytes(bytes),
          PosixFilePermissions.fromString("rw-r--r--"));
    } catch (IOException e) {
      throw PysandboxException.writeFailed("could not write the export " + file, e);
    }
    int failed = (int) runs.stream().filter(r -> r.status() != RunStatus.SUCCEEDED).count();
    return new SessionExport(
        sessionId,
        format,
        runs.size(),
        failed,
        name,
        file.toString(),
        bytes.length,
        bytes.length <= SessionExport.MAX_CONTENT_BYTES ? text : null,
        ipynb ? "jupyter notebook " + file : "marimo edit " + file);
  }

  // -- verify ------------------------------------------------------------------------------------

  /** Seals what is finished, then recomputes the whole chain and hashes every kept file. */
  VerifyReport verify() {
    sealAll();
    List<ChainLink> chain = store.get().chain();
    List<VerifyReport.Problem> problems = new ArrayList<>();
    long tombstones = 0;
    long files = 0;
    String head = null;
    for (ChainLink link : chain) {
      if (link.problem() != null) {
        problems.add(
            new VerifyReport.Problem(link.seq(), link.runId(), link.problem(), describe(link)));
      }
      if (link.runId() != null) {
        head = link.recordSha256();
      }
      if (link.deleted()) {
        tombstones++;
        continue;
      }
      for (Map.Entry<String, String> f : link.keptFiles().entrySet()) {
        files++;
        VerifyReport.Problem p = checkFile(link, f.getKey(), f.getValue());
        if (p != null) {
          problems.add(p);
        }
      }
    }
    return new VerifyReport(
        problems.isEmpty(),
        chain.stream().filter(l -> l.runId() != null).count(),
        tombstones,
        files,
        head,
        problems.isEmpty() ? null : problems.get(0),
        problems);
  }

  private static String describe(ChainLink link) {
    return switch (link.problem()) {
      case "link_broken" ->
          "this link does not follow the one before it: a link before it was removed or changed";
      case "record_missing" -> "the run's record is gone, and no tombstone says it was deleted";
      case "record_changed" ->
          "the run's record no longer hashes to its link " + link.recordSha256();
      case "chain_truncated" ->
          "the chain's head says link "
              + link.seq()
              + " ("
              + link.recordSha256()
              + ") is the last, but the links found end before it";
      default -> link.problem();
    };
  }

  private VerifyReport.Problem checkFile(ChainLink link, String path, String sha256) {
    Path dir = link.filesDir() == null ? layout.runFiles(link.runId()) : Path.of(link.filesDir());
    String where = "run " + link.runId();
    try (FileStream f =
        java.util.Objects.requireNonNullElseGet(
            blobs.stream(link.runId(), path, where),
            () -> WorkspaceAccess.open(dir, path, where))) {
      if (!f.sha256().equals(sha256)) {
        return new VerifyReport.Problem(
            link.seq(),
            link.runId(),
            "file_changed",
            path + ": sha256 is " + f.sha256() + ", sealed as " + sha256);
      }
      return null;
    } catch (PysandboxException e) {
      String kind = e.code() == ErrorCode.NOT_FOUND ? "file_missing" : "file_changed";
      return new VerifyReport.Problem(link.seq(), link.runId(), kind, path + ": " + e.getMessage());
    }
  }

  /** How long closing waits for the notebooks of runs that just finished. */
  private static final long CLOSE_WAIT_MILLIS = 2000;

  /**
   * Writes the notebooks still queued (waiting at most {@value #CLOSE_WAIT_MILLIS} ms; the next
   * start writes what is left) and stops.
   */
  @Override
  public void close() {
    closed = true;
    submit(this::drain);
    worker.shutdown();
    CorePools.awaitTermination(worker, CLOSE_WAIT_MILLIS);
  }
}

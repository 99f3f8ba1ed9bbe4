package dev.pysandbox.core.audit;

import dev.pysandbox.api.DeleteResult;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PurgeResult;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionExport;
import dev.pysandbox.api.SessionStep;
import dev.pysandbox.api.VerifyReport;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.blobs.KeptBlobs;
import dev.pysandbox.core.files.RegularFiles;
import dev.pysandbox.core.files.TreeDeletion;
import dev.pysandbox.core.files.WorkspaceAccess;
import dev.pysandbox.notebook.Notebooks;
import dev.pysandbox.store.ChainLink;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.StoredRun;
import dev.pysandbox.util.DurableFiles;
import dev.pysandbox.util.TimeSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a reviewer does with finished runs: delete one (its record leaves a tombstone in the hash
 * chain), purge the old ones, export a session as a notebook, and verify the chain and every kept
 * file against it. A run is deleted under the {@link AuditTrail}'s lock of it, so that no notebook
 * is being written into its directory meanwhile; verifying first seals what is finished.
 */
public final class AuditReview {
  private static final Logger log = LoggerFactory.getLogger(AuditReview.class);

  private static final DateTimeFormatter EXPORT_STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

  private final DataLayout layout;
  private final Supplier<RunStore> store;
  private final TimeSource time;
  private final AuditTrail writer;
  private final KeptBlobs blobs;

  /**
   * @param writer the writer of the runs' notebooks and seals
   */
  public AuditReview(
      DataLayout layout, Supplier<RunStore> store, TimeSource time, AuditTrail writer) {
    this.layout = layout;
    this.store = store;
    this.time = time;
    this.writer = writer;
    this.blobs = new KeptBlobs(layout, store);
  }

  public DeleteResult delete(String tenant, RunRecord run, boolean deleteFiles, String reason) {
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
    synchronized (writer.lockOf(run.runId())) {
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
        Path dir = writer.runDir(run.runId());
        files = treeBytes(dir);
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
          TreeDeletion.deleteTree(dir);
        }
      }
      // A blob another run still references stays; what the tenant's storage shrank by counts.
      long freed = blobs.release(tenant, run.runId());
      files += deleteFiles ? freed : 0;
      return new DeleteResult(run.runId(), true, deleteFiles, files, gone.recordBytes());
    }
  }

  public PurgeResult purge(String tenant, int olderThanDays, RunStatus status, boolean dryRun) {
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
      long dirBytes = treeBytes(writer.runDir(r.runId()));
      if (!dryRun) {
        synchronized (writer.lockOf(r.runId())) {
          if (store.get().delete(tenant, r.runId(), reason).isEmpty()) {
            continue; // deleted meanwhile by someone else
          }
          TreeDeletion.deleteTree(writer.runDir(r.runId()));
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
      RegularFiles.each(dir, true, (file, attrs) -> total[0] += attrs.size());
    } catch (IOException e) {
      log.debug("could not measure {}: {}", dir, e.toString());
    }
    return total[0];
  }

  // -- export ------------------------------------------------------------------------------------

  public SessionExport export(String tenant, String sessionId, String format) {
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
    List<SessionStep> steps = store.get().sessionSteps(tenant, sessionId, SessionExport.MAX_RUNS);
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
      DurableFiles.writeReadable(file, bytes);
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
  public VerifyReport verify() {
    writer.sealAll();
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
}

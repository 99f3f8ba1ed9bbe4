package dev.pysandbox.core.runs;

import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.blobs.KeptBlobs;
import dev.pysandbox.core.blobs.RunFiles;
import dev.pysandbox.core.blobs.TenantStorage;
import dev.pysandbox.core.files.CollectBudget;
import dev.pysandbox.core.files.WorkspaceFiles;
import dev.pysandbox.core.sandboxes.WorkspaceDisposal;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.util.TimeSource;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to a run's workspace once its code has ended: the files it created or changed are
 * found (a snapshot), hashed and kept with the run, all within one {@link CollectBudget} (time,
 * bytes hashed, the run's cancel), so that nothing the code left behind (a sparse file of a
 * terabyte, a million files) keeps the run from ending. What the budget did not cover is listed
 * with the reason, and the run's message says how many; a cancel that cut the collection short
 * makes the run {@code cancelled}.
 */
public final class FileCollection {
  private static final Logger log = LoggerFactory.getLogger(FileCollection.class);

  private final DataLayout layout;
  private final TimeSource clock;
  private final Executor blocking;
  private final CollectBudget.Bounds bounds;
  private final TenantStorage tenantStorage;
  private final KeptBlobs blobs;

  public FileCollection(
      DataLayout layout,
      TimeSource clock,
      Executor blocking,
      CollectBudget.Bounds b,
      TenantStorage tenantStorage,
      KeptBlobs blobs) {
    this.blobs = blobs;
    this.tenantStorage = tenantStorage;
    this.layout = layout;
    this.clock = clock;
    this.blocking = blocking;
    this.bounds = b;
  }

  /**
   * A one-shot sandbox is killed, then what its workspace holds is kept with the run (as for a
   * session's run: regular files only, sparse kept sparse, up to the quota) and the workspace is
   * released (a file system of its own unmounted, its uid given back). The common case, an empty
   * workspace, does not wait for the kill.
   */
  void oneShot(Sandbox sandbox, RunRecord.Builder run, ActiveRun active) {
    Path workspace = sandbox.workspace();
    boolean empty = WorkspaceFiles.isEmpty(workspace);
    var killed = sandbox.kill("one-shot run finished");
    if (!empty) {
      try {
        sandbox.exited().get(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        log.warn("sandbox {} did not exit 5 s after SIGKILL", sandbox.id());
      }
      CollectBudget spend = budget(active);
      try {
        var files = WorkspaceFiles.snapshot(workspace, Map.of(), false, spend);
        keep(run, workspace, WorkspaceFiles.diff(Map.of(), files.files()), sandbox, spend);
      } catch (RuntimeException e) {
        log.warn("could not keep the files of run {}: {}", run.build().runId(), e.toString());
      }
      noteSkipped(run, spend);
    }
    killed.whenCompleteAsync((report, err) -> WorkspaceDisposal.discard(sandbox), blocking);
  }

  /** The files a session's run created or changed, against the session's last snapshot. */
  void session(Session session, Sandbox sandbox, RunRecord.Builder run, ActiveRun active) {
    CollectBudget spend = budget(active);
    try {
      var before = session.files();
      var after = WorkspaceFiles.snapshot(sandbox.workspace(), before, true, spend);
      session.files(after);
      keep(run, sandbox.workspace(), WorkspaceFiles.diff(before, after.files()), sandbox, spend);
    } catch (RuntimeException e) {
      log.warn("could not collect the files of run {}: {}", run.build().runId(), e.toString());
    }
    noteSkipped(run, spend);
  }

  private CollectBudget budget(ActiveRun active) {
    return CollectBudget.start(
        clock, bounds, active == null ? () -> false : active::cancelRequested);
  }

  /** Keeps the changed files with the run and lists them (and what was not kept) in it. */
  private void keep(
      RunRecord.Builder run,
      Path workspace,
      List<Artifact> changes,
      Sandbox sandbox,
      CollectBudget spend) {
    run.artifacts(changes); // listed even if keeping them fails
    RunRecord r = run.build();
    // The tighter of the workspace's quota and kept_files_max_mb bounds the copies; what the
    // tenant has left is checked per file once its content is known, since content its runs keep
    // already costs it nothing (each blob counts once).
    long quota = sandbox.limits().diskBytes();
    String setting = "disk_quota_mb";
    if (spend.keptMaxBytes() < quota) {
      quota = spend.keptMaxBytes();
      setting = "kept_files_max_mb";
    }
    String tenant = r.tenant() == null ? "" : r.tenant();
    RunFiles.Kept kept;
    try (RunFiles.Destination to =
        blobs.forRun(tenant, r.runId(), tenantStorage.left(r.tenant()))) {
      kept = RunFiles.keep(workspace, changes, to, quota, setting, spend);
    }
    run.artifacts(kept.artifacts());
    if (kept.kept()) {
      run.artifactsDir(blobs.dir().toString());
    }
    noteCapped(run, kept, setting);
    noteCapped(run, kept, RunFiles.TENANT_STORAGE);
  }

  /** The run's message says how many files the cap left out (each file says why). */
  private static void noteCapped(RunRecord.Builder run, RunFiles.Kept kept, String setting) {
    long capped =
        kept.artifacts().stream()
            .filter(a -> a.skipped() != null && a.skipped().endsWith("(" + setting + ")"))
            .count();
    if (capped == 0) {
      return;
    }
    String note =
        capped
            + (capped == 1 ? " file was" : " files were")
            + " not kept ("
            + setting
            + "; each file says why)";
    RunRecord r = run.build();
    run.message(r.message() == null ? note : r.message() + "; " + note);
  }

  /** The run's message says what the budget left out; a cancel that cut it short is the end. */
  private static void noteSkipped(RunRecord.Builder run, CollectBudget spend) {
    String note = spend.note();
    if (note == null) {
      return;
    }
    RunRecord r = run.build();
    if (spend.cancelled() && r.status() != RunStatus.CANCELLED) {
      run.status(RunStatus.CANCELLED)
          .killReason(null)
          .message(
              "cancelled while its files were collected (its code had ended "
                  + r.status().wireName()
                  + "); "
                  + note);
      return;
    }
    run.message(r.message() == null ? note : r.message() + "; " + note);
  }
}

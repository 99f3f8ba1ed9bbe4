package dev.pysandbox.core.sandboxes;

import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.core.blobs.RunFiles;
import dev.pysandbox.core.files.TreeDeletion;
import dev.pysandbox.core.files.WorkspaceFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a sandbox's workspace once the server no longer needs it: the backend releases what
 * holds it (a file system of its own is unmounted and deleted, its host uid given back), then what
 * is left on the host is deleted, or, when kept, copied back out of that file system first.
 */
public final class WorkspaceDisposal {
  private static final Logger log = LoggerFactory.getLogger(WorkspaceDisposal.class);

  private WorkspaceDisposal() {}

  /**
   * After a session is closed: its sandbox is killed and its workspace goes, unless workspaces are
   * kept ({@code keep_workspaces}).
   */
  public static void afterSessionClosed(Sandbox sandbox, boolean keepWorkspaces) {
    KillOutcome.kill(sandbox, "session closed");
    if (keepWorkspaces) {
      keep(sandbox);
    } else {
      discard(sandbox);
    }
  }

  /**
   * Kills a sandbox no longer wanted and discards its workspace on {@code executor}, off the
   * caller's thread; when the executor takes no more work (the server is stopping), only kills it
   * here: the backend's shutdown releases the rest.
   */
  public static void killAndDiscard(Sandbox sandbox, String reason, Executor executor) {
    Runnable end =
        () -> {
          KillOutcome.kill(sandbox, reason);
          discard(sandbox);
        };
    try {
      executor.execute(end);
    } catch (RejectedExecutionException e) {
      sandbox.kill(reason);
    }
  }

  /**
   * Releases the workspace and deletes its files. Blocking; interrupted (the server is stopping),
   * it leaves what is left to the backend's shutdown and the next start-up.
   */
  public static void discard(Sandbox sandbox) {
    sandbox.releaseWorkspace();
    if (!Thread.currentThread().isInterrupted()) {
      deleteQuietly(sandbox);
    }
  }

  /**
   * Releases the workspace but keeps its files where they are ({@code keep_workspaces}): out of a
   * file system of its own, they are copied to a plain directory at the same path first.
   */
  static void keep(Sandbox sandbox) {
    Path workspace = sandbox.workspace();
    if (!sandbox.diskQuotaEnforced()) {
      sandbox.releaseWorkspace();
      return;
    }
    Path kept = workspace.resolveSibling(workspace.getFileName() + ".kept");
    try {
      var files = WorkspaceFiles.snapshot(workspace, Map.of(), false).files();
      RunFiles.keep(
          workspace, WorkspaceFiles.diff(Map.of(), files), kept, sandbox.limits().diskBytes());
      sandbox.releaseWorkspace();
      Files.deleteIfExists(workspace);
      if (Files.isDirectory(kept)) {
        Files.move(kept, workspace);
      }
    } catch (IOException | RuntimeException e) {
      log.warn("could not keep the files of {}: {}", workspace, e.getMessage());
      sandbox.releaseWorkspace();
    }
  }

  private static void deleteQuietly(Sandbox sandbox) {
    try {
      TreeDeletion.deleteTree(sandbox.workspace());
    } catch (UncheckedIOException e) {
      log.warn("could not delete {}: {}", sandbox.workspace(), e.getMessage());
    }
  }
}

package dev.pysandbox.core.host;

import dev.pysandbox.backend.SandboxIds;
import dev.pysandbox.core.files.TreeDeletion;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes the directories of workspaces whose sandboxes are gone, named {@code sbx-<instance>-<n>}
 * after the server that made them. A directory that is still a mount point (its file system not yet
 * released) is left alone: deleting the files of an image that is going away is wasted work, and
 * the directory cannot go while it is mounted.
 */
final class WorkspaceDirs {
  private static final Logger log = LoggerFactory.getLogger(WorkspaceDirs.class);

  private WorkspaceDirs() {}

  /**
   * @param instances which servers' workspaces to remove
   * @param keepFiles true to remove only empty directories ({@code keep_workspaces})
   * @param budgetMillis stops starting new deletions after this long
   * @return how many were removed
   */
  static int remove(
      Path workspacesDir, Predicate<String> instances, boolean keepFiles, long budgetMillis) {
    long start = System.nanoTime();
    int removed = 0;
    if (!Files.isDirectory(workspacesDir, LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(workspacesDir)) {
      for (Path dir : dirs) {
        if (TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) >= budgetMillis) {
          log.debug("left workspaces in {} to the next start: out of time", workspacesDir);
          break;
        }
        String instance = SandboxIds.instanceOf(dir.getFileName().toString());
        if (instance == null
            || !instances.test(instance)
            || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)
            || isMountPoint(dir)) {
          continue;
        }
        if (remove(dir, keepFiles)) {
          removed++;
        }
      }
    } catch (IOException | UncheckedIOException e) {
      log.warn("could not clean workspaces in {}: {}", workspacesDir, e.getMessage());
    }
    return removed;
  }

  private static boolean remove(Path dir, boolean keepFiles) {
    try {
      if (keepFiles) {
        return Files.deleteIfExists(dir);
      }
      TreeDeletion.deleteTree(dir);
      return true;
    } catch (DirectoryNotEmptyException e) {
      return false; // kept: it holds files
    } catch (IOException | UncheckedIOException e) {
      log.warn("could not delete workspace {}: {}", dir, e.getMessage());
      return false;
    }
  }

  /** A directory on another device than its parent's has a file system mounted on it. */
  static boolean isMountPoint(Path dir) {
    try {
      Object own = Files.getAttribute(dir, "unix:dev", LinkOption.NOFOLLOW_LINKS);
      Object parent = Files.getAttribute(dir.getParent(), "unix:dev", LinkOption.NOFOLLOW_LINKS);
      return !own.equals(parent);
    } catch (IOException | UnsupportedOperationException e) {
      return true; // unknown: leave it
    }
  }
}

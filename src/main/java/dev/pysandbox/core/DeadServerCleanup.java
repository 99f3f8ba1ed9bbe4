package dev.pysandbox.core;

import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxIds;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.HousekeepingLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Clean-up after server processes of this data directory that died: their sessions recorded closed,
 * their runs {@code interrupted}, their sandbox processes killed and their workspaces deleted. Only
 * a server that starts does it; commands that only look never do.
 */
final class DeadServerCleanup {
  private static final Logger log = LoggerFactory.getLogger(DeadServerCleanup.class);

  private final DataLayout layout;
  private final InstanceRegistry instances;

  DeadServerCleanup(DataLayout layout, InstanceRegistry instances) {
    this.layout = layout;
    this.instances = instances;
  }

  /** Records the sessions and runs that dead servers left open as closed and interrupted. */
  RunStore recordLost(RunStore s) {
    List<String> lost = s.closeOrphanSessions(instances::isAlive);
    if (!lost.isEmpty()) {
      HousekeepingLog.LOG.info("sessions of stopped servers recorded as closed: {}", lost);
    }
    List<String> interrupted = s.interruptOrphans(instances::isAlive);
    if (!interrupted.isEmpty()) {
      HousekeepingLog.LOG.warn(
          "marked {} runs of stopped servers as interrupted: {}", interrupted.size(), interrupted);
    }
    return s;
  }

  /** Kills the sandbox processes dead servers left, and deletes their workspaces. */
  void reapSandboxes(SandboxBackend backend) {
    int killed = backend.reapOrphans(instances::isAlive);
    if (killed > 0) {
      HousekeepingLog.LOG.warn("killed {} sandbox processes left by stopped servers", killed);
    }
    try (var dirs = Files.list(layout.workspacesDir())) {
      for (Path dir : dirs.toList()) {
        String instance = SandboxIds.instanceOf(dir.getFileName().toString());
        if (instance != null && !instances.isAlive(instance)) {
          WorkspaceFiles.deleteTree(dir);
        }
      }
    } catch (IOException | UncheckedIOException e) {
      log.warn("could not clean old workspaces in {}: {}", layout.workspacesDir(), e.getMessage());
    }
  }
}

package dev.pysandbox.core.host;

import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.events.EventSpill;
import dev.pysandbox.core.events.SpilledOutput;
import dev.pysandbox.store.RecoveredOutput;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.HousekeepingLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Clean-up after server processes of this data directory that died: their sessions recorded closed,
 * their runs {@code interrupted}, their sandbox processes killed, their workspaces and hub sockets
 * deleted. Only a server that starts does it; commands that only look never do. A server that stops
 * cleanly removes its own workspaces' directories too ({@link #removeOwnWorkspaces}), so that only
 * one that died leaves any.
 */
public final class DeadServerCleanup {
  private static final Logger log = LoggerFactory.getLogger(DeadServerCleanup.class);

  private final DataLayout layout;
  private final InstanceRegistry instances;
  private final boolean keepWorkspaces;
  private final int outputLimit;

  /**
   * @param keepWorkspaces {@code keep_workspaces}: workspaces that hold files are kept, only empty
   *     ones are removed
   * @param outputLimit {@code output_limit}: bytes of stdout and of stderr a record keeps
   */
  public DeadServerCleanup(
      DataLayout layout, InstanceRegistry instances, boolean keepWorkspaces, int outputLimit) {
    this.layout = layout;
    this.instances = instances;
    this.keepWorkspaces = keepWorkspaces;
    this.outputLimit = outputLimit;
  }

  /** Records the sessions and runs that dead servers left open as closed and interrupted. */
  public RunStore recordLost(RunStore s) {
    List<String> lost = s.closeOrphanSessions(instances::isAlive);
    if (!lost.isEmpty()) {
      HousekeepingLog.LOG.info("sessions of stopped servers recorded as lost: {}", lost);
    }
    List<String> interrupted = s.interruptOrphans(instances::isAlive);
    if (!interrupted.isEmpty()) {
      HousekeepingLog.LOG.warn(
          "marked {} runs of stopped servers as interrupted: {}", interrupted.size(), interrupted);
    }
    for (String runId : interrupted) {
      recoverOutput(s, runId);
    }
    try {
      List<String> agents =
          s.agentRuns().interruptOrphans(instances::isAlive, "interrupted: its server stopped");
      if (!agents.isEmpty()) {
        HousekeepingLog.LOG.warn("agent runs of stopped servers recorded interrupted: {}", agents);
      }
    } catch (UnsupportedOperationException e) {
      HousekeepingLog.LOG.debug("this store keeps no agent runs");
    }
    return s;
  }

  /** What an interrupted run had printed, from its spill into its record; then the spill goes. */
  private void recoverOutput(RunStore s, String runId) {
    Path spill = EventSpill.fileOf(layout.runFiles(runId));
    try {
      RecoveredOutput out = SpilledOutput.read(spill, outputLimit);
      if (out != null && s.recoverOutput(runId, out)) {
        HousekeepingLog.LOG.info(
            "run {}: {} bytes of output recovered from {}",
            runId,
            out.stdoutBytes() + out.stderrBytes(),
            spill);
      }
      Files.deleteIfExists(spill);
    } catch (IOException | RuntimeException e) {
      HousekeepingLog.LOG.warn("run {}: its spilled output could not be recovered: {}", runId, e);
    }
  }

  /** Kills the sandbox processes dead servers left, and deletes their workspaces. */
  public void reapSandboxes(SandboxBackend backend) {
    int killed = backend.reapOrphans(instances::isAlive);
    if (killed > 0) {
      HousekeepingLog.LOG.warn("killed {} sandbox processes left by stopped servers", killed);
    }
    WorkspaceDirs.remove(
        layout.workspacesDir(), i -> !instances.isAlive(i), keepWorkspaces, Long.MAX_VALUE);
  }

  /** Deletes the worker-hub sockets of dead servers (a server killed never deletes its own). */
  public void removeDeadSockets() {
    int removed = HubSockets.removeDead(layout, instances::isAlive);
    if (removed > 0) {
      HousekeepingLog.LOG.info("deleted {} worker-hub sockets left by stopped servers", removed);
    }
  }

  /**
   * At a clean stop, once every sandbox is gone and its file system released: this server's
   * workspace directories, within {@code budgetMillis}.
   */
  public void removeOwnWorkspaces(long budgetMillis) {
    String own = instances.id();
    WorkspaceDirs.remove(layout.workspacesDir(), own::equals, keepWorkspaces, budgetMillis);
  }
}

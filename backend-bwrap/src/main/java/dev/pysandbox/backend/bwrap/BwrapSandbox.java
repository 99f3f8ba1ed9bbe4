package dev.pysandbox.backend.bwrap;

import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.AbstractSandbox;
import dev.pysandbox.backend.Cgroups;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.backend.ResourceUsage;
import dev.pysandbox.backend.SandboxExit;
import dev.pysandbox.util.Pause;
import dev.pysandbox.worker.WorkerConnection;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One bubblewrap sandbox. Killing it sends SIGKILL to the bwrap process group (the sandbox's PID 1
 * goes with it, and the kernel then kills every process left in its PID namespace, however it
 * detached itself), waits for the launcher to reap it, and then looks in {@code /proc} for anything
 * still in that namespace, killing and counting what it finds. When the host gives cgroups, the
 * sandbox has its own, which bounds its memory, processes and CPU, counts what it used, and is
 * emptied (every member killed) and removed once the sandbox has exited, however it ended. Its
 * workspace (with its file-system image, if it has one) and its host uid outlive it until the
 * server releases them.
 */
final class BwrapSandbox extends AbstractSandbox {
  private static final Logger log = LoggerFactory.getLogger(BwrapSandbox.class);
  private static final long CHECK_MILLIS = 2000;

  private final LauncherClient.Child child;
  private final LauncherClient launcher;
  private final Cgroups cgroups;
  private final WorkspaceImages.Image image;
  private final Consumer<BwrapSandbox> releaser;
  private final AtomicBoolean released = new AtomicBoolean();
  private ResourceUsage lastUsage;
  private boolean cgroupRemoved;

  BwrapSandbox(
      String id,
      Path workspace,
      WorkerConnection worker,
      LauncherClient.Child child,
      LauncherClient launcher,
      Executor blocking,
      Limits limits,
      Cgroups cgroups,
      HostUser user,
      WorkspaceImages.Image image,
      Consumer<BwrapSandbox> releaser) {
    super(id, workspace, worker, blocking, limits, user);
    this.image = image;
    this.releaser = releaser;
    this.child = child;
    this.launcher = launcher;
    this.cgroups = cgroups.available() ? cgroups : null;
    child.exited.whenComplete(
        (exit, err) -> {
          // The group stays until removeCgroup has kept its last counts: a run that lost its
          // sandbox can still ask why.
          worker.close("the sandbox " + (exit == null ? "ended" : exit.describe()));
          if (this.cgroups != null) {
            blocking.execute(this::removeCgroup);
          }
        });
    // A runner the hub cut off for breaking the protocol is of no more use: end its sandbox.
    worker
        .closed()
        .thenAcceptAsync(
            reason -> {
              if (worker.protocolViolation() != null) {
                kill(reason);
              }
            },
            blocking);
  }

  @Override
  public synchronized Optional<ResourceUsage> usage() {
    if (cgroups == null) {
      return Optional.empty();
    }
    return Optional.of(cgroupRemoved ? lastUsage : cgroups.usage(id));
  }

  @Override
  public void resetPeak() {
    if (cgroups != null) {
      cgroups.resetPeak(id);
    }
  }

  /**
   * Kills what is left in the cgroup (escaped from the PID namespace, if anything could) and
   * removes it.
   */
  private void removeCgroup() {
    int left = cgroups.killAll(id, CHECK_MILLIS);
    if (left > 0) {
      log.error("sandbox {}: {} processes of its cgroup survived SIGKILL", id, left);
    }
    synchronized (this) {
      lastUsage = cgroups.usage(id);
      cgroupRemoved = true;
    }
    cgroups.remove(id);
  }

  @Override
  public boolean diskQuotaEnforced() {
    return image != null;
  }

  /** Its file-system image, or {@code null} when its workspace is a plain directory. */
  WorkspaceImages.Image image() {
    return image;
  }

  @Override
  public void releaseWorkspace() {
    if (!released.compareAndSet(false, true)) {
      return;
    }
    if (!child.exited.isDone()) {
      kill("its workspace was released");
      try {
        child.exited.get(CHECK_MILLIS, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        log.warn("sandbox {} not reaped before its workspace was released", id);
      }
    }
    releaser.accept(this);
  }

  /** The launcher that started it (and mounted its workspace image). */
  LauncherClient launcher() {
    return launcher;
  }

  /** Whether {@link #releaseWorkspace()} has run. */
  boolean released() {
    return released.get();
  }

  @Override
  public CompletableFuture<SandboxExit> exited() {
    return child.exited;
  }

  /** SIGKILL to the bwrap process group, through the launcher. */
  @Override
  protected void startKill(String reason) {
    log.debug("killing sandbox {}: {}", id, reason);
    launcher.kill(child);
  }

  /**
   * Once the sandbox's PID 1 has exited, the kernel has already killed and reaped everything else
   * in its PID namespace; so the check is cheap: watch PID 1, and only if it will not die look
   * through the whole process table for what is left.
   */
  @Override
  protected int finishKill(String reason) {
    try {
      child.exited.get(CHECK_MILLIS, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      log.warn("sandbox {} not reaped {} ms after SIGKILL", id, CHECK_MILLIS);
    }
    long[] init = child.init.getNow(null);
    int left = 0;
    if (init != null) {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CHECK_MILLIS);
      while (ProcessTable.isAliveIn(init[0], init[1]) && System.nanoTime() < deadline) {
        ProcessTable.killNow(init[0]);
        Pause.millis(1);
      }
      if (ProcessTable.isAliveIn(init[0], init[1])) {
        List<Long> pids = ProcessTable.inPidNamespace(init[1]);
        pids.forEach(ProcessTable::killNow);
        left = pids.size();
        log.error("sandbox {}: {} processes survived SIGKILL: {}", id, left, pids);
      }
    } else {
      log.warn("sandbox {}: its PID namespace is unknown, so the kill could not be checked", id);
    }
    worker.close("the sandbox was killed");
    return left;
  }
}

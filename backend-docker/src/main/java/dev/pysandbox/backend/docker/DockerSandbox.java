package dev.pysandbox.backend.docker;

import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.AbstractSandbox;
import dev.pysandbox.backend.Cgroups;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.backend.ResourceUsage;
import dev.pysandbox.backend.SandboxExit;
import dev.pysandbox.worker.WorkerConnection;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One container. Its PID 1 is {@code container_init.py}, which starts the runner, reaps what ends,
 * and outlives the runner long enough for the server to read the container's cgroup (peak memory,
 * OOM kills, pids-limit hits) before removing it. The sandbox ends when the server kills it, or
 * when its runner goes (its control channel closes): either way the container is then killed and
 * removed, which ends every process in its PID namespace.
 */
final class DockerSandbox extends AbstractSandbox {
  private static final Logger log = LoggerFactory.getLogger(DockerSandbox.class);

  private final String containerId;
  private final DockerEngine engine;
  private final CompletableFuture<SandboxExit> exited = new CompletableFuture<>();
  private final AtomicBoolean released = new AtomicBoolean();
  private final AtomicBoolean ending = new AtomicBoolean();
  private volatile Cgroups.Member cgroup;
  private volatile long initPid = -1;
  private volatile long pidNamespace = -1;
  private volatile ResourceUsage lastUsage;

  DockerSandbox(
      String id,
      String containerId,
      Path workspace,
      WorkerConnection worker,
      DockerEngine engine,
      Executor blocking,
      Limits limits,
      HostUser user) {
    super(id, workspace, worker, blocking, limits, user);
    this.containerId = containerId;
    this.engine = engine;
    // The runner went (it exited, was killed, or was cut off for breaking the protocol): the
    // container is of no more use.
    worker.closed().thenAcceptAsync(reason -> end(false, reason), blocking);
  }

  /** Its init process as this host sees it (to read its cgroup and check the kill). */
  void started(long pid) {
    if (pid <= 0) {
      return;
    }
    initPid = pid;
    pidNamespace = ProcessTable.pidNamespaceOf(pid);
    cgroup = Cgroups.ofProcess(pid).orElse(null);
    if (cgroup == null) {
      log.warn("sandbox {}: container {} has no cgroup this server can read", id, containerId);
    }
  }

  String containerId() {
    return containerId;
  }

  @Override
  public boolean diskQuotaEnforced() {
    return false;
  }

  @Override
  public void releaseWorkspace() {
    if (!released.compareAndSet(false, true)) {
      return;
    }
    if (!exited.isDone()) {
      try {
        kill("its workspace was released").get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        log.warn("sandbox {}: kill before release failed: {}", id, e.toString());
      }
    }
  }

  @Override
  protected void startKill(String reason) {
    log.debug("killing sandbox {} (container {}): {}", id, containerId, reason);
  }

  /** Ends the container (see {@link #end}) and counts what outlived its removal. */
  @Override
  protected int finishKill(String reason) {
    end(true, reason);
    return leftBehind();
  }

  /**
   * Ends the container once (blocking): keeps the cgroup's last counts while its init still holds
   * it, learns how the runner ended from the init's line in the log, kills and removes the
   * container, and completes {@link #exited()}.
   */
  private void end(boolean byServer, String reason) {
    if (!ending.compareAndSet(false, true)) {
      try {
        exited.join();
      } catch (RuntimeException e) {
        // completed below by whoever ended it
      }
      return;
    }
    Cgroups.Member group = cgroup;
    if (group != null && group.exists()) {
      lastUsage = group.usage();
    }
    long t0 = System.nanoTime();
    SandboxExit exit;
    if (byServer) {
      exit = new SandboxExit(null, 9, true);
    } else {
      exit = engine.runnerExit(containerId);
    }
    worker.close(byServer ? "the sandbox was killed" : "the sandbox " + exit.describe());
    String failure = engine.remove(containerId);
    if (failure != null && !byServer && exit.code() == null && exit.signal() == null) {
      exit = new SandboxExit(null, null, false, failure);
    }
    log.debug(
        "sandbox {} ended ({}): {} in {} ms",
        id,
        reason,
        exit.describe(),
        (System.nanoTime() - t0) / 1_000_000);
    exited.complete(exit);
  }

  /** Processes still in the container's PID namespace after its removal (0 when the kill held). */
  private int leftBehind() {
    long pid = initPid;
    long ns = pidNamespace;
    if (pid <= 0 || ns <= 0) {
      return 0;
    }
    if (!ProcessTable.isAliveIn(pid, ns)) {
      return 0;
    }
    var pids = ProcessTable.inPidNamespace(ns);
    pids.forEach(ProcessTable::killNow);
    if (!pids.isEmpty()) {
      log.error(
          "sandbox {}: {} processes survived the container's removal: {}", id, pids.size(), pids);
    }
    return pids.size();
  }

  @Override
  public CompletableFuture<SandboxExit> exited() {
    return exited;
  }

  @Override
  public Optional<ResourceUsage> usage() {
    Cgroups.Member group = cgroup;
    if (group == null) {
      return Optional.empty();
    }
    ResourceUsage last = lastUsage;
    if (last != null || exited.isDone()) {
      return Optional.ofNullable(last);
    }
    ResourceUsage now = group.usage();
    return Optional.of(now);
  }

  @Override
  public void resetPeak() {
    Cgroups.Member group = cgroup;
    if (group != null && lastUsage == null) {
      group.resetPeak();
    }
  }
}

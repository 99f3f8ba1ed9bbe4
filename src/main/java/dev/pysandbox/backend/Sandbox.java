package dev.pysandbox.backend;

import dev.pysandbox.worker.WorkerConnection;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One running sandbox: an isolated process tree holding one runner, and its workspace (the code's
 * {@code /mnt/data}). Thread-safe.
 */
public interface Sandbox {
  /** Unique among all sandboxes of this data directory. */
  String id();

  /** The workspace as the server sees it on the host. */
  Path workspace();

  /** The runner's end of the worker protocol. */
  WorkerConnection worker();

  /**
   * Kills every process of the sandbox (SIGKILL, no grace), waits for them to be gone and checks
   * that none is left. Idempotent: later calls return the same future.
   *
   * @param reason recorded in the log
   */
  CompletableFuture<KillReport> kill(String reason);

  /** Completes when the sandbox's process tree has exited, for whatever reason. */
  CompletableFuture<SandboxExit> exited();

  /** The limits it was started with. */
  Limits limits();

  /**
   * What its processes used so far, measured by the kernel (its cgroup); still answers once the
   * sandbox has exited (the last counts). Empty when the host gives no cgroup.
   */
  Optional<ResourceUsage> usage();

  /** Starts a new peak-memory measurement (before each run). */
  void resetPeak();
}

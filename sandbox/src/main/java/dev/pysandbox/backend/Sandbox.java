package dev.pysandbox.backend;

import dev.pysandbox.api.Limits;
import dev.pysandbox.worker.Worker;
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

  /**
   * The workspace as the server sees it on the host. It lives until {@link #releaseWorkspace()}:
   * the server may read and write it after the sandbox has exited.
   */
  Path workspace();

  /**
   * True when the file system holds the workspace to {@code limits().diskBytes()} at all times, in
   * bytes and in files (a writer gets ENOSPC), so that nothing needs to measure it; false when the
   * quota can only be measured while a run is in flight.
   */
  boolean diskQuotaEnforced();

  /**
   * Releases what holds the workspace apart from the host's file system, once the server no longer
   * needs its files: with its own file system (see {@link #diskQuotaEnforced()}) that file system
   * is unmounted and deleted, with every file in it, and {@link #workspace()} is an empty directory
   * again. Also gives back the host user the sandbox ran as. Kills the sandbox first if it is still
   * running. Blocking, idempotent; the caller deletes what is left at {@link #workspace()}.
   */
  void releaseWorkspace();

  /**
   * The host user its processes run as and its files belong to: one of its own, a user shared by
   * every sandbox, or the server's own user.
   */
  HostUser hostUser();

  /** The runner's end of the worker protocol, over whatever the backend carries it on. */
  Worker worker();

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

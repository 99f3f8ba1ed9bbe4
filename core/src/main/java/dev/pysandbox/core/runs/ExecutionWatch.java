package dev.pysandbox.core.runs;

import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.ResourceUsage;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.core.files.WorkspaceFiles;
import dev.pysandbox.util.TimeSource;

/**
 * The limits the server enforces itself while a run is in flight, looked at between polls: output
 * ({@code output_max_mb}), the workspace's size ({@code disk_quota_mb}, when the workspace is no
 * file system of its own) and the pids limit's hits; and, once the run has answered, the limits a
 * failed run may still have failed on. Apart from the execution's wait and kill, so that what
 * counts as a breach is read in one place.
 */
final class ExecutionWatch {
  /**
   * The limits the server enforces while a run is in flight (the kernel enforces memory, processes
   * and CPU by itself).
   *
   * @param outputMaxBytes stdout and stderr together, kept or not
   * @param outputsMaxBytes {@code __outputs__} as JSON ({@code outputs_max_mb})
   * @param workspaceBytesBefore the workspace's size before the run: the quota stops a run that
   *     grows it past the limit, not one that found it already there
   * @param graceMillis after a KeyboardInterrupt for a limit, how long before the sandbox is killed
   */
  record Guard(
      long outputMaxBytes, long outputsMaxBytes, long workspaceBytesBefore, long graceMillis) {}

  /** A limit the server found passed while the run was in flight. */
  record Breach(KillReason reason, String message) {}

  private final Sandbox sandbox;
  private final Guard guard;
  final ResourceUsage before;
  private ResourceUsage atEnd;
  private final TimeSource time;
  private long nextDiskCheck;

  ExecutionWatch(Sandbox sandbox, Guard guard, ResourceUsage before, TimeSource time) {
    this.sandbox = sandbox;
    this.guard = guard;
    this.before = before;
    this.time = time;
    this.nextDiskCheck = time.nanoTime();
  }

  boolean pidsLimitHit() {
    return before != null
        && sandbox.usage().orElse(before).pidsLimitHits() > before.pidsLimitHits();
  }

  /**
   * Reads the counters once the runner has answered (kept for the run's record).
   *
   * @return true when the run hit the pids limit
   */
  boolean endOfRun() {
    if (before == null) {
      return false;
    }
    atEnd = sandbox.usage().orElse(before);
    return atEnd.pidsLimitHits() > before.pidsLimitHits();
  }

  /** The counters at the end of the run; read now when the run did not end normally. */
  ResourceUsage latest() {
    if (before == null) {
      return null;
    }
    return atEnd != null ? atEnd : sandbox.usage().orElse(null);
  }

  Breach check() {
    long out = sandbox.worker().outputBytes();
    if (out > guard.outputMaxBytes()) {
      return new Breach(
          KillReason.OUTPUT_LIMIT,
          "the run wrote "
              + mib(out)
              + " MiB to stdout and stderr, over the "
              + mib(guard.outputMaxBytes())
              + " MiB output limit (output_max_mb)");
    }
    if (pidsLimitHit()) {
      return pidsBreach(sandbox);
    }
    long t = time.nanoTime();
    // A workspace that is a file system of its own cannot pass its quota: nothing to measure.
    if (t - nextDiskCheck >= 0 && !sandbox.diskQuotaEnforced()) {
      long quota = sandbox.limits().diskBytes();
      long used = WorkspaceFiles.totalBytes(sandbox.workspace(), quota);
      // A big workspace costs more to measure: measure it less often (at most 10% of the time).
      long now = time.nanoTime();
      nextDiskCheck = now + 9 * (now - t);
      if (used > quota && used > guard.workspaceBytesBefore()) {
        return diskBreach(used, quota);
      }
    }
    return null;
  }

  private static Breach diskBreach(long used, long quota) {
    return new Breach(
        KillReason.DISK_QUOTA,
        "the workspace /mnt/data grew past its "
            + mib(quota)
            + " MiB quota (disk_quota_mb; over "
            + mib(used)
            + " MiB now): delete files to go on");
  }

  static Breach pidsBreach(Sandbox sandbox) {
    return new Breach(
        KillReason.PIDS_LIMIT,
        "the run hit the limit of "
            + sandbox.limits().pids()
            + " processes and threads (pids_limit), so its sandbox was killed with every"
            + " process in it");
  }

  /**
   * The disk quota's last word, once the run's files are counted: a run too quick for the watch
   * (under one poll) can still have grown the workspace past the quota, unless the file system
   * holds the workspace to it. Such a run fails for that, and the files stay so that the code can
   * delete them. The watch and this are the quota's only checks, both here.
   *
   * @param before the workspace's bytes before the run
   * @param after its bytes once the run's files were collected
   */
  static void checkQuotaAfterRun(Sandbox sandbox, long before, long after, RunRecord.Builder run) {
    long quota = sandbox.limits().diskBytes();
    if (!sandbox.diskQuotaEnforced()
        && after > quota
        && after > before
        && run.build().killReason() == null) {
      stoppedBy(diskBreach(after, quota), run);
    }
  }

  /** A run that finished after a limit made it stop: it failed, for that reason. */
  static void stoppedBy(Breach breach, RunRecord.Builder run) {
    run.status(RunStatus.FAILED).killReason(breach.reason()).message(breach.message());
    if (run.build().error() == null) {
      run.error(new ErrorInfo("LimitExceeded", breach.message(), null));
    }
  }

  /**
   * A run that failed on its own may still have failed on a limit: the address-space rlimit
   * (MemoryError), the file-size rlimit or a full {@code /tmp} (errno 27, 28), the pids limit.
   */
  static void classifyError(Sandbox sandbox, RunRecord.Builder run) {
    RunRecord r = run.build();
    if (r.status() != RunStatus.FAILED || r.error() == null) {
      return;
    }
    String name = r.error().name();
    String value = r.error().value() == null ? "" : r.error().value();
    if (name.equals("MemoryError")) {
      run.killReason(KillReason.MEMORY_LIMIT)
          .message(
              "MemoryError: the run asked for more memory than its limit of "
                  + mib(sandbox.limits().memoryBytes())
                  + " MiB allows (memory_limit_mb)");
    } else if (value.startsWith("[Errno 27]") || value.startsWith("[Errno 28]")) {
      run.killReason(KillReason.DISK_QUOTA)
          .message(
              name
                  + ": "
                  + value
                  + " (a file may grow to the disk quota of "
                  + mib(sandbox.limits().diskBytes())
                  + " MiB; /tmp holds "
                  + mib(sandbox.limits().tmpBytes())
                  + " MiB)");
    }
  }

  private static long mib(long bytes) {
    return bytes / Limits.MIB;
  }
}

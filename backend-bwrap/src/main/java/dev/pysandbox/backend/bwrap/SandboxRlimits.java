package dev.pysandbox.backend.bwrap;

import dev.pysandbox.api.Limits;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The rlimits of a sandbox, set by the launcher's child before it drops privileges: a second line
 * behind its cgroup, and the only one where there is no cgroup.
 */
final class SandboxRlimits {
  private static final long GIB = 1024L * Limits.MIB;

  /** RLIMIT_CPU, a backstop for a server that no longer watches: a day of CPU. */
  static final long CPU_SECONDS_BACKSTOP = 86_400;

  /** RLIMIT_NOFILE: open files per process. */
  static final long OPEN_FILES = 1024;

  /**
   * RLIMIT_NPROC with a cgroup and one host user shared by every sandbox: counted over all of them,
   * so it guards the host; the pids cgroup bounds each sandbox.
   */
  static final long HOST_USER_PROCESSES = 8192;

  private final int sandboxesAtOnce;

  /**
   * @param sandboxesAtOnce how many sandboxes may live at once (sessions, pool, a few starting)
   */
  SandboxRlimits(int sandboxesAtOnce) {
    this.sandboxesAtOnce = sandboxesAtOnce;
  }

  /**
   * Soft and hard value per resource. The address-space limit leaves room for what numpy and its
   * thread pools reserve without touching; without a cgroup it is the memory bound itself, so it is
   * tighter.
   *
   * @param cgroup whether the sandbox has a cgroup of its own
   * @param ownUid whether it runs as a host uid of its own
   */
  Map<String, long[]> of(Limits limits, boolean cgroup, boolean ownUid) {
    long as =
        cgroup
            ? limits.memoryBytes() + 4 * GIB
            : Math.max(2 * limits.memoryBytes(), limits.memoryBytes() + GIB);
    Map<String, long[]> r = new LinkedHashMap<>();
    r.put("AS", new long[] {as, as});
    r.put("CPU", new long[] {CPU_SECONDS_BACKSTOP, CPU_SECONDS_BACKSTOP + 5});
    r.put("NOFILE", new long[] {OPEN_FILES, OPEN_FILES});
    r.put("FSIZE", new long[] {limits.diskBytes(), limits.diskBytes()});
    long nproc = processes(limits, cgroup, ownUid);
    r.put("NPROC", new long[] {nproc, nproc});
    r.put("CORE", new long[] {0, 0});
    return r;
  }

  /**
   * RLIMIT_NPROC. With a host uid of its own, it bounds the sandbox alone: its pids limit without a
   * cgroup, twice that with one (the kernel checks it first, and the pids cgroup must be the one
   * that stops a fork bomb, so that the run can say so). With one host user shared by all sandboxes
   * and no cgroup, it is the only process bound, shared: room for every session and pooled sandbox
   * at its pids limit, so that a fork bomb cannot take the host down (it can still crowd out the
   * other sandboxes' forks).
   */
  long processes(Limits limits, boolean cgroup, boolean ownUid) {
    if (ownUid) {
      return cgroup ? 2L * limits.pids() : limits.pids();
    }
    if (cgroup) {
      return HOST_USER_PROCESSES;
    }
    return (long) limits.pids() * sandboxesAtOnce;
  }

  /** For check_setup. */
  String describe(Limits limits, boolean cgroup, boolean ownUid) {
    return "address space, CPU seconds ("
        + CPU_SECONDS_BACKSTOP
        + "), open files ("
        + OPEN_FILES
        + "), file size (= disk quota), processes of the sandbox's host user ("
        + processes(limits, cgroup, ownUid)
        + (ownUid ? ", its own" : ", shared")
        + ")";
  }
}

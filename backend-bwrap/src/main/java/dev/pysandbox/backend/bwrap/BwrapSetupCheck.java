package dev.pysandbox.backend.bwrap;

import dev.pysandbox.backend.Cgroups;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.config.PysandboxConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What works on this host but less well than it should for bwrap sandboxes, with the fix: no cgroup
 * per sandbox, and, as root, host directories of {@code fs_mounts} that the sandboxes' users cannot
 * reach. They become problems of {@code check_setup}.
 */
final class BwrapSetupCheck {
  private BwrapSetupCheck() {}

  /**
   * @param cgroups as found at set-up, or null before it
   */
  static List<String> problems(PysandboxConfig config, Cgroups cgroups) {
    List<String> problems = new ArrayList<>();
    String c = cgroups == null ? "" : cgroups.describe();
    if (c.startsWith("none")) {
      problems.add(
          "no cgroup per sandbox ("
              + c.substring("none: ".length())
              + "): memory, processes and CPU are bounded by rlimits only, and a run stopped by"
              + " them cannot be told apart; run the server as root, or under systemd with"
              + " Delegate=yes (cgroup v2)");
    }
    if (HostUser.currentUid() == 0) {
      config.tiers().hostMounts().forEach((name, dir) -> unreachable(name, dir, problems));
    }
    return problems;
  }

  /**
   * When the server runs as root, sandboxes run as other users: a host directory of {@code
   * fs_mounts} they cannot enter (others lack x on it or on a directory above, or r on it) would
   * fail the start of every sandbox of a tier that shows it.
   */
  private static void unreachable(String name, Path dir, List<String> problems) {
    try {
      for (Path p = dir; p != null; p = p.getParent()) {
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
        boolean ok =
            perms.contains(PosixFilePermission.OTHERS_EXECUTE)
                && (!p.equals(dir) || perms.contains(PosixFilePermission.OTHERS_READ));
        if (!ok) {
          problems.add(
              "fs_mounts "
                  + name
                  + "="
                  + dir
                  + ": the sandboxes' users cannot "
                  + (p.equals(dir) ? "list " + p : "enter " + p)
                  + " (others need "
                  + (p.equals(dir) ? "r-x" : "--x")
                  + "), so sandboxes of a tier that shows it fail to start");
          return;
        }
      }
    } catch (IOException | UnsupportedOperationException e) {
      problems.add("fs_mounts " + name + "=" + dir + ": cannot read its permissions: " + e);
    }
  }
}

package dev.pysandbox.backend;

import static dev.pysandbox.backend.CgroupFiles.keyed;
import static dev.pysandbox.backend.CgroupFiles.readLong;
import static dev.pysandbox.backend.CgroupFiles.under;
import static dev.pysandbox.backend.CgroupFiles.write;
import static dev.pysandbox.backend.CgroupFiles.writeIfPresent;

import dev.pysandbox.api.Limits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * cgroup v2: one unified hierarchy, every controller in one directory per group. A group with
 * processes cannot also delegate controllers to children, so the server first moves itself into a
 * leaf of its own; a sandbox's group is killed in one write ({@code cgroup.kill}).
 */
final class CgroupV2 extends Cgroups {
  static final String UNIFIED = "unified";
  private static final Path ROOT = Path.of("/sys/fs/cgroup");

  private CgroupV2(Map<String, Path> bases, String unavailable, boolean inspected) {
    super(bases, unavailable, inspected);
  }

  /** True when this host mounts the unified hierarchy. */
  static boolean mounted() {
    return Files.exists(ROOT.resolve("cgroup.controllers"));
  }

  static Cgroups detect(String own, String scope, String instanceId) {
    Path mine = under(ROOT, own);
    Path base = mine.resolve(baseName(scope, instanceId));
    try {
      // A v2 group with processes cannot also delegate controllers to children: move this
      // server into a leaf first, then enable the controllers below.
      Path leaf = mine.resolve("pysandbox-server-" + scope + "-" + instanceId);
      Files.createDirectories(leaf);
      Files.writeString(leaf.resolve("cgroup.procs"), Long.toString(ProcessHandle.current().pid()));
      Files.writeString(mine.resolve("cgroup.subtree_control"), "+memory +pids +cpu");
      Files.createDirectories(base);
      Files.writeString(base.resolve("cgroup.subtree_control"), "+memory +pids +cpu");
      return new CgroupV2(Map.of(UNIFIED, base), null, false);
    } catch (IOException e) {
      return new CgroupV2(
          Map.of(),
          "cgroup v2: " + mine + " is not delegated to this server (" + e.getMessage() + ")",
          false);
    }
  }

  static Cgroups inspect(String own) {
    Path mine = under(ROOT, own);
    if (!Files.isWritable(mine) || !Files.isWritable(mine.resolve("cgroup.subtree_control"))) {
      return new CgroupV2(
          Map.of(), "cgroup v2: " + mine + " is not delegated to this server (not writable)", true);
    }
    return new CgroupV2(Map.of(), null, true);
  }

  /** Another process's group (see {@link Cgroups#ofProcess}), given its path in the hierarchy. */
  static Optional<Member> ofProcess(String path) {
    Path d = under(ROOT, path);
    return Files.isRegularFile(d.resolve("memory.current"))
        ? Optional.of(new Reader(d))
        : Optional.empty();
  }

  @Override
  String describeAvailable() {
    return "cgroup v2";
  }

  @Override
  void apply(String sandboxId, Limits limits) throws IOException {
    Path d = bases.get(UNIFIED).resolve(sandboxId);
    write(d, "memory.max", Long.toString(limits.memoryBytes()));
    writeIfPresent(d, "memory.swap.max", "0");
    writeIfPresent(d, "memory.oom.group", "1");
    write(d, "pids.max", Integer.toString(limits.pids()));
    writeIfPresent(d, "cpu.max", cpuQuota(limits) + " " + PERIOD_US);
  }

  @Override
  Member member(String sandboxId) {
    return new Reader(bases.get(UNIFIED).resolve(sandboxId));
  }

  @Override
  void killFirst(String sandboxId) {
    CgroupFiles.writeQuietly(bases.get(UNIFIED).resolve(sandboxId), "cgroup.kill", "1");
  }

  /** One v2 group's counters; the peak is the group's lifetime peak. */
  private record Reader(Path dir) implements Member {
    @Override
    public ResourceUsage usage() {
      return new ResourceUsage(
          readLong(dir, "memory.peak", readLong(dir, "memory.current", 0)),
          keyed(dir, "cpu.stat", "usage_usec") * 1000,
          keyed(dir, "memory.events", "oom_kill"),
          keyed(dir, "pids.events", "max"));
    }

    @Override
    public void resetPeak() {
      // v2 keeps the lifetime peak
    }

    @Override
    public boolean exists() {
      return Files.isDirectory(dir);
    }
  }
}

package dev.pysandbox.backend;

import static dev.pysandbox.backend.CgroupFiles.keyed;
import static dev.pysandbox.backend.CgroupFiles.readLong;
import static dev.pysandbox.backend.CgroupFiles.under;
import static dev.pysandbox.backend.CgroupFiles.write;
import static dev.pysandbox.backend.CgroupFiles.writeIfPresent;
import static dev.pysandbox.backend.CgroupFiles.writeQuietly;

import dev.pysandbox.api.Limits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * cgroup v1 (as on this kind of machine): one hierarchy per controller, so a sandbox has a group in
 * each of memory, pids, cpu and cpuacct (memory and pids required, the others used when mounted).
 */
final class CgroupV1 extends Cgroups {
  private static final Logger log = LoggerFactory.getLogger(CgroupV1.class);

  private CgroupV1(Map<String, Path> bases, String unavailable, boolean inspected) {
    super(bases, unavailable, inspected);
  }

  static Cgroups detect(Map<String, String> own, String scope, String instanceId)
      throws IOException {
    Map<String, Path> bases = new LinkedHashMap<>();
    List<String> missing = new ArrayList<>();
    for (Map.Entry<String, Path> parent : parents(own, missing).entrySet()) {
      String controller = parent.getKey();
      Path base = parent.getValue().resolve(baseName(scope, instanceId));
      try {
        Files.createDirectories(base);
        bases.put(controller, base);
      } catch (IOException e) {
        missing.add(controller + " (" + base + " not writable: " + e.getMessage() + ")");
      }
    }
    if (!bases.containsKey("memory") || !bases.containsKey("pids")) {
      bases.values().forEach(CgroupFiles::removeQuietly);
      return new CgroupV1(Map.of(), "cgroup v1: no writable " + String.join(", ", missing), false);
    }
    if (!missing.isEmpty()) {
      log.info("cgroup v1: not limiting through {}", missing);
    }
    return new CgroupV1(bases, null, false);
  }

  static Cgroups inspect(Map<String, String> own) throws IOException {
    Map<String, Path> bases = new LinkedHashMap<>();
    List<String> missing = new ArrayList<>();
    for (Map.Entry<String, Path> parent : parents(own, missing).entrySet()) {
      if (Files.isWritable(parent.getValue())) {
        bases.put(parent.getKey(), parent.getValue());
      } else {
        missing.add(parent.getKey() + " (" + parent.getValue() + " not writable)");
      }
    }
    if (!bases.containsKey("memory") || !bases.containsKey("pids")) {
      return new CgroupV1(Map.of(), "cgroup v1: no writable " + String.join(", ", missing), true);
    }
    return new CgroupV1(Map.copyOf(bases), null, true);
  }

  /**
   * For each controller pysandbox uses, the group this process is in (the parent of its own
   * groups); a controller that is not mounted is added to {@code missing}.
   */
  private static Map<String, Path> parents(Map<String, String> own, List<String> missing)
      throws IOException {
    Map<String, Path> parents = new LinkedHashMap<>();
    for (String controller : List.of("memory", "pids", "cpu", "cpuacct")) {
      Optional<Path> mount = mount(controller);
      if (mount.isEmpty()) {
        missing.add(controller + " (not mounted)");
      } else {
        parents.put(controller, under(mount.get(), own.getOrDefault(controller, "/")));
      }
    }
    return parents;
  }

  /** Where the hierarchy holding {@code controller} is mounted, if it is. */
  static Optional<Path> mount(String controller) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/mounts"))) {
      String[] f = line.split(" ");
      if (f.length > 3 && f[2].equals("cgroup") && List.of(f[3].split(",")).contains(controller)) {
        return Optional.of(Path.of(f[1]));
      }
    }
    return Optional.empty();
  }

  /** Another process's groups (see {@link Cgroups#ofProcess}), given its path per controller. */
  static Optional<Member> ofProcess(Map<String, String> paths) throws IOException {
    Optional<Path> mem = mount("memory");
    Optional<Path> pids = mount("pids");
    Optional<Path> acct = mount("cpuacct");
    if (mem.isEmpty() || pids.isEmpty() || !paths.containsKey("pids")) {
      return Optional.empty();
    }
    Reader m =
        new Reader(
            under(mem.get(), paths.get("memory")),
            under(pids.get(), paths.get("pids")),
            acct.isPresent() && paths.containsKey("cpuacct")
                ? under(acct.get(), paths.get("cpuacct"))
                : null);
    return m.exists() ? Optional.of(m) : Optional.empty();
  }

  @Override
  String describeAvailable() {
    return "cgroup v1 (" + String.join(", ", bases.keySet()) + ")";
  }

  @Override
  void apply(String sandboxId, Limits limits) throws IOException {
    Path mem = bases.get("memory").resolve(sandboxId);
    // memsw (memory + swap) must stay >= memory: raise it first when raising, after when lowering.
    writeIfPresent(mem, "memory.memsw.limit_in_bytes", "-1");
    write(mem, "memory.limit_in_bytes", Long.toString(limits.memoryBytes()));
    writeIfPresent(mem, "memory.memsw.limit_in_bytes", Long.toString(limits.memoryBytes()));
    writeIfPresent(mem, "memory.swappiness", "0");
    write(bases.get("pids").resolve(sandboxId), "pids.max", Integer.toString(limits.pids()));
    if (bases.containsKey("cpu")) {
      Path cpu = bases.get("cpu").resolve(sandboxId);
      write(cpu, "cpu.cfs_period_us", Long.toString(PERIOD_US));
      write(cpu, "cpu.cfs_quota_us", cpuQuota(limits));
    }
  }

  @Override
  Member member(String sandboxId) {
    return new Reader(
        bases.get("memory").resolve(sandboxId),
        bases.get("pids").resolve(sandboxId),
        bases.containsKey("cpuacct") ? bases.get("cpuacct").resolve(sandboxId) : null);
  }

  /** One v1 sandbox's groups' counters; the peak memory is since the last reset. */
  private record Reader(Path memory, Path pids, Path cpu) implements Member {
    @Override
    public ResourceUsage usage() {
      return new ResourceUsage(
          readLong(memory, "memory.max_usage_in_bytes", 0),
          cpu == null ? 0 : readLong(cpu, "cpuacct.usage", 0),
          Math.max(keyed(memory, "memory.oom_control", "oom_kill"), 0),
          keyed(pids, "pids.events", "max"));
    }

    @Override
    public void resetPeak() {
      writeQuietly(memory, "memory.max_usage_in_bytes", "0");
    }

    @Override
    public boolean exists() {
      return Files.isDirectory(memory);
    }
  }
}

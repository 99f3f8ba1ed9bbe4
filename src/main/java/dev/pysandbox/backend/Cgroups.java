package dev.pysandbox.backend;

import dev.pysandbox.api.Limits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cgroup per sandbox, where the host lets the server make one: memory (swap 0), pids and CPU
 * limits, usage (peak memory, CPU time), the reason a sandbox died (OOM kill, pids limit hit), and
 * a kill of everything in it. Works on cgroup v1 (one hierarchy per controller, as on this kind of
 * machine) and v2 (one unified hierarchy).
 *
 * <p>Groups live under {@code <the server's own cgroup>/pysandbox-<scope>-<instance>/<sandbox id>}
 * in each hierarchy, where the scope names the data directory: a starting server removes only the
 * groups of dead servers of its own data directory (their instance lock is free), never those of
 * servers using another one, which it cannot tell alive from dead.
 */
public final class Cgroups {
  private static final Logger log = LoggerFactory.getLogger(Cgroups.class);
  private static final long PERIOD_US = 100_000;

  /** How long start-up waits for a dead server's sandboxes to leave their groups. */
  private static final long DEAD_GROUP_WAIT_NANOS = 10_000_000_000L;

  /** Per controller (v1) or "unified" (v2): the directory under which this server's groups go. */
  private final Map<String, Path> bases;

  private final boolean v2;
  private final String unavailable;

  /** Found by {@link #inspect()}: describes what a server would get, and holds no group. */
  private final boolean inspected;

  private Cgroups(Map<String, Path> bases, boolean v2, String unavailable) {
    this(bases, v2, unavailable, false);
  }

  private Cgroups(Map<String, Path> bases, boolean v2, String unavailable, boolean inspected) {
    this.bases = bases;
    this.v2 = v2;
    this.unavailable = unavailable;
    this.inspected = inspected;
  }

  /** No cgroups at all, for the reason given. */
  public static Cgroups disabled(String why) {
    return new Cgroups(Map.of(), false, why);
  }

  /**
   * Finds the hierarchies and makes this server's parent groups; never throws.
   *
   * @param scope names the data directory (see {@code DataLayout.identity()})
   */
  public static Cgroups detect(String scope, String instanceId) {
    try {
      Map<String, String> own = ownPaths();
      if (Files.exists(Path.of("/sys/fs/cgroup/cgroup.controllers"))) {
        return unified(own.getOrDefault("", "/"), scope, instanceId);
      }
      Map<String, Path> bases = new LinkedHashMap<>();
      List<String> missing = new ArrayList<>();
      for (Map.Entry<String, Path> parent : v1Parents(own, missing).entrySet()) {
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
        bases.values().forEach(Cgroups::removeQuietly);
        return new Cgroups(Map.of(), false, "cgroup v1: no writable " + String.join(", ", missing));
      }
      if (!missing.isEmpty()) {
        log.info("cgroup v1: not limiting through {}", missing);
      }
      return new Cgroups(bases, false, null);
    } catch (IOException | RuntimeException e) {
      return new Cgroups(Map.of(), false, "cgroups: " + e.getMessage());
    }
  }

  /**
   * What {@link #detect} would find, for commands that only look ({@code doctor}): nothing is
   * created, written or moved, so the answer is "the parent groups are writable", not "a group was
   * made". The result cannot create groups and holds none; never throws.
   */
  public static Cgroups inspect() {
    try {
      Map<String, String> own = ownPaths();
      Path root = Path.of("/sys/fs/cgroup");
      if (Files.exists(root.resolve("cgroup.controllers"))) {
        Path mine = under(root, own.getOrDefault("", "/"));
        if (!Files.isWritable(mine) || !Files.isWritable(mine.resolve("cgroup.subtree_control"))) {
          return new Cgroups(
              Map.of(),
              true,
              "cgroup v2: " + mine + " is not delegated to this server (not writable)",
              true);
        }
        return new Cgroups(Map.of(), true, null, true);
      }
      Map<String, Path> bases = new LinkedHashMap<>();
      List<String> missing = new ArrayList<>();
      for (Map.Entry<String, Path> parent : v1Parents(own, missing).entrySet()) {
        if (Files.isWritable(parent.getValue())) {
          bases.put(parent.getKey(), parent.getValue());
        } else {
          missing.add(parent.getKey() + " (" + parent.getValue() + " not writable)");
        }
      }
      if (!bases.containsKey("memory") || !bases.containsKey("pids")) {
        return new Cgroups(
            Map.of(), false, "cgroup v1: no writable " + String.join(", ", missing), true);
      }
      return new Cgroups(Map.copyOf(bases), false, null, true);
    } catch (IOException | RuntimeException e) {
      return new Cgroups(Map.of(), false, "cgroups: " + e.getMessage(), true);
    }
  }

  /**
   * For each cgroup v1 controller pysandbox uses, the group this process is in (the parent of its
   * own groups); a controller that is not mounted is added to {@code missing}.
   */
  private static Map<String, Path> v1Parents(Map<String, String> own, List<String> missing)
      throws IOException {
    Map<String, Path> parents = new LinkedHashMap<>();
    for (String controller : List.of("memory", "pids", "cpu", "cpuacct")) {
      Optional<Path> mount = v1Mount(controller);
      if (mount.isEmpty()) {
        missing.add(controller + " (not mounted)");
      } else {
        parents.put(controller, under(mount.get(), own.getOrDefault(controller, "/")));
      }
    }
    return parents;
  }

  private static String baseName(String scope, String instanceId) {
    return "pysandbox-" + scope + "-" + instanceId;
  }

  private static Cgroups unified(String own, String scope, String instanceId) throws IOException {
    Path root = Path.of("/sys/fs/cgroup");
    Path mine = under(root, own);
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
      return new Cgroups(Map.of("unified", base), true, null);
    } catch (IOException e) {
      return new Cgroups(
          Map.of(),
          true,
          "cgroup v2: " + mine + " is not delegated to this server (" + e.getMessage() + ")");
    }
  }

  /**
   * The groups another process belongs to (a container's init, whose engine made its cgroup), to
   * read what every process in them used; empty when they cannot be found or read from here (an
   * engine on another host, another cgroup namespace).
   */
  public static Optional<Member> ofProcess(long pid) {
    try {
      Map<String, String> paths = new LinkedHashMap<>();
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/cgroup"))) {
        String[] f = line.split(":", 3);
        if (f.length == 3) {
          for (String c : f[1].split(",")) {
            paths.put(f[0].equals("0") && c.isEmpty() ? "unified" : c, f[2]);
          }
        }
      }
      if (paths.containsKey("memory")) {
        Optional<Path> mem = v1Mount("memory");
        Optional<Path> pids = v1Mount("pids");
        Optional<Path> acct = v1Mount("cpuacct");
        if (mem.isEmpty() || pids.isEmpty() || !paths.containsKey("pids")) {
          return Optional.empty();
        }
        Member m =
            new Member(
                false,
                under(mem.get(), paths.get("memory")),
                under(pids.get(), paths.get("pids")),
                acct.isPresent() && paths.containsKey("cpuacct")
                    ? under(acct.get(), paths.get("cpuacct"))
                    : null);
        return Files.isDirectory(m.memory) ? Optional.of(m) : Optional.empty();
      }
      if (paths.containsKey("unified")) {
        Path d = under(Path.of("/sys/fs/cgroup"), paths.get("unified"));
        return Files.isRegularFile(d.resolve("memory.current"))
            ? Optional.of(new Member(true, d, d, d))
            : Optional.empty();
      }
      return Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** The groups of a process found by {@link #ofProcess}: read, never changed but the peak. */
  public static final class Member {
    private final boolean v2;
    private final Path memory;
    private final Path pids;
    private final Path cpu;

    private Member(boolean v2, Path memory, Path pids, Path cpu) {
      this.v2 = v2;
      this.memory = memory;
      this.pids = pids;
      this.cpu = cpu;
    }

    /** Current counters; peak memory since the last {@link #resetPeak} (v1). */
    public ResourceUsage usage() {
      if (v2) {
        return new ResourceUsage(
            readLong(memory, "memory.peak", readLong(memory, "memory.current", 0)),
            keyed(memory, "cpu.stat", "usage_usec") * 1000,
            keyed(memory, "memory.events", "oom_kill"),
            keyed(memory, "pids.events", "max"));
      }
      return new ResourceUsage(
          readLong(memory, "memory.max_usage_in_bytes", 0),
          cpu == null ? 0 : readLong(cpu, "cpuacct.usage", 0),
          Math.max(keyed(memory, "memory.oom_control", "oom_kill"), 0),
          keyed(pids, "pids.events", "max"));
    }

    /** Starts a new peak-memory measurement (v1; v2 keeps the lifetime peak). */
    public void resetPeak() {
      if (!v2) {
        writeQuietly(memory, "memory.max_usage_in_bytes", "0");
      }
    }

    /** Whether the groups are still there (they go with the container). */
    public boolean exists() {
      return Files.isDirectory(memory);
    }
  }

  private static Map<String, String> ownPaths() throws IOException {
    Map<String, String> out = new LinkedHashMap<>();
    for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
      String[] f = line.split(":", 3);
      if (f.length == 3) {
        for (String c : f[1].split(",")) {
          out.put(c, f[2]);
        }
      }
    }
    return out;
  }

  private static Optional<Path> v1Mount(String controller) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/mounts"))) {
      String[] f = line.split(" ");
      if (f.length > 3 && f[2].equals("cgroup") && List.of(f[3].split(",")).contains(controller)) {
        return Optional.of(Path.of(f[1]));
      }
    }
    return Optional.empty();
  }

  private static Path under(Path mount, String path) {
    String rel = path.startsWith("/") ? path.substring(1) : path;
    return rel.isEmpty() ? mount : mount.resolve(rel);
  }

  /** True when sandboxes get a cgroup each. */
  public boolean available() {
    return unavailable == null;
  }

  /** Why no cgroup can be used, or empty when one can. */
  public Optional<String> unavailableReason() {
    return Optional.ofNullable(unavailable);
  }

  /** "cgroup v1 (memory, pids, cpu, cpuacct)" or "cgroup v2", for reports. */
  public String describe() {
    if (unavailable != null) {
      return "none: " + unavailable;
    }
    return v2 ? "cgroup v2" : "cgroup v1 (" + String.join(", ", bases.keySet()) + ")";
  }

  /**
   * Makes one sandbox's groups and sets its limits.
   *
   * @return the directories whose {@code cgroup.procs} the sandbox must join before it starts
   */
  public List<Path> create(String sandboxId, Limits limits) throws IOException {
    if (inspected) {
      throw new IllegalStateException("cgroups found by inspect() cannot create groups");
    }
    List<Path> dirs = new ArrayList<>();
    for (Path base : bases.values()) {
      Path dir = base.resolve(sandboxId);
      Files.createDirectories(dir);
      dirs.add(dir);
    }
    apply(sandboxId, limits);
    return dirs;
  }

  private void apply(String sandboxId, Limits limits) throws IOException {
    String quota = Long.toString(Math.max(1000, Math.round(limits.cpus() * PERIOD_US)));
    if (v2) {
      Path d = bases.get("unified").resolve(sandboxId);
      write(d, "memory.max", Long.toString(limits.memoryBytes()));
      writeIfPresent(d, "memory.swap.max", "0");
      writeIfPresent(d, "memory.oom.group", "1");
      write(d, "pids.max", Integer.toString(limits.pids()));
      writeIfPresent(d, "cpu.max", quota + " " + PERIOD_US);
      return;
    }
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
      write(cpu, "cpu.cfs_quota_us", quota);
    }
  }

  /** Current counters; peak memory since the last {@link #resetPeak}. */
  public ResourceUsage usage(String sandboxId) {
    return member(sandboxId).usage();
  }

  /** Starts a new peak-memory measurement (v1; v2 keeps the lifetime peak). */
  public void resetPeak(String sandboxId) {
    member(sandboxId).resetPeak();
  }

  /** One sandbox's groups, to read. */
  private Member member(String sandboxId) {
    if (v2) {
      Path d = bases.get("unified").resolve(sandboxId);
      return new Member(true, d, d, d);
    }
    return new Member(
        false,
        bases.get("memory").resolve(sandboxId),
        bases.get("pids").resolve(sandboxId),
        bases.containsKey("cpuacct") ? bases.get("cpuacct").resolve(sandboxId) : null);
  }

  /**
   * Kills every process in the sandbox's groups and waits until the groups are empty (a killed
   * process leaves only once it is reaped), or the time is up.
   *
   * @return processes still in the groups at the end
   */
  public int killAll(String sandboxId, long timeoutMillis) {
    if (v2) {
      writeQuietly(bases.get("unified").resolve(sandboxId), "cgroup.kill", "1");
    }
    List<Path> dirs = bases.values().stream().map(base -> base.resolve(sandboxId)).toList();
    return killMembers(dirs, System.nanoTime() + timeoutMillis * 1_000_000);
  }

  private static int killMembers(List<Path> dirs, long deadlineNanos) {
    while (true) {
      List<Long> pids = new ArrayList<>();
      for (Path dir : dirs) {
        try {
          for (String line : Files.readAllLines(dir.resolve("cgroup.procs"))) {
            if (!line.isBlank()) {
              pids.add(Long.parseLong(line.trim()));
            }
          }
        } catch (IOException | NumberFormatException e) {
          // removed, or not ours
        }
      }
      pids.forEach(ProcessTable::killNow);
      if (pids.isEmpty() || System.nanoTime() > deadlineNanos) {
        return pids.size();
      }
      try {
        Thread.sleep(2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return pids.size();
      }
    }
  }

  /** Removes a sandbox's (empty) groups. */
  public void remove(String sandboxId) {
    for (Path base : bases.values()) {
      removeQuietly(base.resolve(sandboxId));
    }
  }

  /**
   * Removes the groups of servers of this data directory that are gone (and their sandboxes'
   * groups). Groups of other data directories, and groups named before scopes existed, are never
   * touched: this server cannot know whether their servers live.
   */
  public int removeDead(java.util.function.Predicate<String> instanceAlive) {
    int removed = 0;
    for (Path base : bases.values()) {
      Path parent = base.getParent();
      String name = base.getFileName().toString();
      String prefix = name.substring(0, name.lastIndexOf('-') + 1);
      try (var dirs = Files.list(parent)) {
        for (Path dir : dirs.toList()) {
          String other = dir.getFileName().toString();
          if (!other.startsWith(prefix) || other.equals(name)) {
            continue;
          }
          String instance = other.substring(prefix.length());
          if (!instance.matches("[0-9a-f]{8}") || instanceAlive.test(instance)) {
            continue;
          }
          // Killed processes leave only once reaped, which the host's init may take a moment to
          // do for a dead server's sandboxes.
          emptyAndRemove(dir, System.nanoTime() + DEAD_GROUP_WAIT_NANOS);
          removed++;
        }
      } catch (IOException e) {
        log.debug("cannot look for old cgroups in {}", parent, e);
      }
    }
    return removed;
  }

  /** Kills every member of each group below {@code dir}, removes them, then {@code dir}. */
  private static void emptyAndRemove(Path dir, long deadlineNanos) {
    try (var children = Files.list(dir)) {
      for (Path child : children.filter(Files::isDirectory).toList()) {
        killMembers(List.of(child), deadlineNanos);
        removeQuietly(child);
      }
    } catch (IOException e) {
      log.debug("cannot list cgroup {}: {}", dir, e.getMessage());
    }
    removeQuietly(dir);
  }

  /**
   * Removes this server's groups on shutdown: the members of any sandbox group still there are
   * killed (waiting at most {@code timeoutMillis} for them to be reaped), then the groups go.
   */
  public void close(long timeoutMillis) {
    if (inspected) {
      return; // holds no group: the bases are the server's own parents, not ours to remove
    }
    long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
    bases.values().forEach(base -> emptyAndRemove(base, deadline));
  }

  // -- files -------------------------------------------------------------------------------------

  private static void write(Path dir, String file, String value) throws IOException {
    Files.write(dir.resolve(file), value.getBytes(StandardCharsets.US_ASCII));
  }

  private static void writeIfPresent(Path dir, String file, String value) {
    if (Files.exists(dir.resolve(file))) {
      writeQuietly(dir, file, value);
    }
  }

  private static void writeQuietly(Path dir, String file, String value) {
    try {
      write(dir, file, value);
    } catch (IOException e) {
      log.debug("cannot write {} to {}/{}: {}", value, dir, file, e.getMessage());
    }
  }

  private static long readLong(Path dir, String file, long fallback) {
    try {
      return Long.parseLong(Files.readString(dir.resolve(file)).trim());
    } catch (IOException | NumberFormatException e) {
      return fallback;
    }
  }

  /** The value of {@code key} in a "key value" file, or 0. */
  private static long keyed(Path dir, String file, String key) {
    try {
      for (String line : Files.readAllLines(dir.resolve(file))) {
        String[] f = line.trim().split("\\s+");
        if (f.length == 2 && f[0].equals(key)) {
          return Long.parseLong(f[1]);
        }
      }
    } catch (IOException | NumberFormatException e) {
      // absent on this kernel
    }
    return 0;
  }

  private static void removeQuietly(Path dir) {
    try {
      Files.deleteIfExists(dir);
    } catch (NoSuchFileException e) {
      // gone
    } catch (IOException e) {
      log.debug("cannot remove cgroup {}: {}", dir, e.getMessage());
    }
  }
}

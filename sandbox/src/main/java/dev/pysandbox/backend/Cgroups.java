package dev.pysandbox.backend;

import dev.pysandbox.api.Limits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cgroup per sandbox, where the host lets the server make one: memory (swap 0), pids and CPU
 * limits, usage (peak memory, CPU time), the reason a sandbox died (OOM kill, pids limit hit), and
 * a kill of everything in it. What differs between cgroup v1 (one hierarchy per controller, as on
 * this kind of machine) and v2 (one unified hierarchy) is in {@link CgroupV1} and {@link CgroupV2};
 * the files both touch in {@link CgroupFiles}.
 *
 * <p>Groups live under {@code <the server's own cgroup>/pysandbox-<scope>-<instance>/<sandbox id>}
 * in each hierarchy, where the scope names the data directory: a starting server removes only the
 * groups of dead servers of its own data directory (their instance lock is free), never those of
 * servers using another one, which it cannot tell alive from dead.
 */
public abstract class Cgroups {
  private static final Logger log = LoggerFactory.getLogger(Cgroups.class);
  static final long PERIOD_US = 100_000;

  /** How long start-up waits for a dead server's sandboxes to leave their groups. */
  private static final long DEAD_GROUP_WAIT_NANOS = 10_000_000_000L;

  /** Per controller (v1) or "unified" (v2): the directory under which this server's groups go. */
  final Map<String, Path> bases;

  private final String unavailable;

  /** Found by {@link #inspect()}: describes what a server would get, and holds no group. */
  private final boolean inspected;

  Cgroups(Map<String, Path> bases, String unavailable, boolean inspected) {
    this.bases = bases;
    this.unavailable = unavailable;
    this.inspected = inspected;
  }

  /** The groups of a process, or of one sandbox: read, never changed but the peak. */
  public interface Member {
    /** Current counters; peak memory since the last {@link #resetPeak} (v1). */
    ResourceUsage usage();

    /** Starts a new peak-memory measurement (v1; v2 keeps the lifetime peak). */
    void resetPeak();

    /** Whether the groups are still there (they go with the container). */
    boolean exists();
  }

  /** No cgroups at all, for the reason given. */
  public static Cgroups disabled(String why) {
    return new None(why, false);
  }

  /**
   * Finds the hierarchies and makes this server's parent groups; never throws.
   *
   * @param scope names the data directory (see {@code DataLayout.identity()})
   */
  public static Cgroups detect(String scope, String instanceId) {
    try {
      Map<String, String> own = CgroupFiles.ownPaths();
      if (CgroupV2.mounted()) {
        return CgroupV2.detect(own.getOrDefault("", "/"), scope, instanceId);
      }
      return CgroupV1.detect(own, scope, instanceId);
    } catch (IOException | RuntimeException e) {
      return new None("cgroups: " + e.getMessage(), false);
    }
  }

  /**
   * What {@link #detect} would find, for commands that only look ({@code doctor}): nothing is
   * created, written or moved, so the answer is "the parent groups are writable", not "a group was
   * made". The result cannot create groups and holds none; never throws.
   */
  public static Cgroups inspect() {
    try {
      Map<String, String> own = CgroupFiles.ownPaths();
      if (CgroupV2.mounted()) {
        return CgroupV2.inspect(own.getOrDefault("", "/"));
      }
      return CgroupV1.inspect(own);
    } catch (IOException | RuntimeException e) {
      return new None("cgroups: " + e.getMessage(), true);
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
            paths.put(f[0].equals("0") && c.isEmpty() ? CgroupV2.UNIFIED : c, f[2]);
          }
        }
      }
      if (paths.containsKey("memory")) {
        return CgroupV1.ofProcess(paths);
      }
      if (paths.containsKey(CgroupV2.UNIFIED)) {
        return CgroupV2.ofProcess(paths.get(CgroupV2.UNIFIED));
      }
      return Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  static String baseName(String scope, String instanceId) {
    return "pysandbox-" + scope + "-" + instanceId;
  }

  static String cpuQuota(Limits limits) {
    return Long.toString(Math.max(1000, Math.round(limits.cpus() * PERIOD_US)));
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
    return unavailable != null ? "none: " + unavailable : describeAvailable();
  }

  abstract String describeAvailable();

  /** Writes one sandbox's limits into its groups, just made. */
  abstract void apply(String sandboxId, Limits limits) throws IOException;

  /** One sandbox's groups, to read. */
  abstract Member member(String sandboxId);

  /** What kills a group's processes at once, before they are killed one by one (v2). */
  void killFirst(String sandboxId) {}

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

  /** Current counters; peak memory since the last {@link #resetPeak}. */
  public ResourceUsage usage(String sandboxId) {
    return member(sandboxId).usage();
  }

  /** Starts a new peak-memory measurement (v1; v2 keeps the lifetime peak). */
  public void resetPeak(String sandboxId) {
    member(sandboxId).resetPeak();
  }

  /**
   * Kills every process in the sandbox's groups and waits until the groups are empty (a killed
   * process leaves only once it is reaped), or the time is up.
   *
   * @return processes still in the groups at the end
   */
  public int killAll(String sandboxId, long timeoutMillis) {
    killFirst(sandboxId);
    List<Path> dirs = bases.values().stream().map(base -> base.resolve(sandboxId)).toList();
    return CgroupFiles.killMembers(dirs, System.nanoTime() + timeoutMillis * 1_000_000);
  }

  /** Removes a sandbox's (empty) groups. */
  public void remove(String sandboxId) {
    for (Path base : bases.values()) {
      CgroupFiles.removeQuietly(base.resolve(sandboxId));
    }
  }

  /**
   * Removes the groups of servers of this data directory that are gone (and their sandboxes'
   * groups). Groups of other data directories, and groups named before scopes existed, are never
   * touched: this server cannot know whether their servers live.
   */
  public int removeDead(Predicate<String> instanceAlive) {
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
          CgroupFiles.emptyAndRemove(dir, System.nanoTime() + DEAD_GROUP_WAIT_NANOS);
          removed++;
        }
      } catch (IOException e) {
        log.debug("cannot look for old cgroups in {}", parent, e);
      }
    }
    return removed;
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
    bases.values().forEach(base -> CgroupFiles.emptyAndRemove(base, deadline));
  }

  /** No cgroups: turned off, or none the server may use. */
  private static final class None extends Cgroups {
    None(String why, boolean inspected) {
      super(Map.of(), why, inspected);
    }

    @Override
    String describeAvailable() {
      throw new IllegalStateException("no cgroups");
    }

    @Override
    void apply(String sandboxId, Limits limits) {
      throw new IllegalStateException("no cgroups: " + unavailableReason().orElse(""));
    }

    @Override
    Member member(String sandboxId) {
      throw new IllegalStateException("no cgroups: " + unavailableReason().orElse(""));
    }
  }
}

package dev.pysandbox.backend.bwrap;

import dev.pysandbox.backend.AbstractSandboxBackend;
import dev.pysandbox.backend.BackendParts;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.backend.SandboxIds;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.backend.SeccompFilter;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.util.HousekeepingLog;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default backend: each sandbox is a bubblewrap process tree (see {@link BwrapCommand}) started
 * by the launcher helper. When the server runs as root, each sandbox runs as a host uid of its own
 * from {@code sandbox_uid_range} (or all as {@code sandbox_user}), its workspace is a file system
 * of its own (an ext4 image, see {@link WorkspaceImages}) where the host allows it, and the sandbox
 * directory is bind-mounted by the launcher at a path those users can reach.
 *
 * <p>The steps every sandbox goes through are {@link AbstractSandboxBackend}'s; here are bwrap's
 * own: its uid and workspace image, its cgroup and rlimits, the launcher's spawn, and the release
 * of its image and uid. Set-up is {@link BwrapSetup}; the launcher is kept by {@link
 * LauncherSupervisor}.
 */
public final class BwrapBackend extends AbstractSandboxBackend<BwrapSetup, BwrapSandbox> {
  private static final Logger log = LoggerFactory.getLogger(BwrapBackend.class);

  /** How long closing waits for the sandboxes to be reaped. */
  private static final long CLOSE_WAIT_MILLIS = 500;

  private final SandboxRlimits rlimits;
  private final LauncherSupervisor launchers;

  /** Sandboxes whose workspace and uid are not released yet, running or not. */
  private final Map<String, BwrapSandbox> held = new ConcurrentHashMap<>();

  private Path networkFilter;

  /**
   * @param instanceId this server process's id; it prefixes every sandbox id so that start-up
   *     hygiene can tell whose sandboxes are whose
   * @param blocking runs the blocking parts of starting and killing
   */
  public BwrapBackend(
      PysandboxConfig config,
      DataLayout layout,
      WorkerHub hub,
      String instanceId,
      Executor blocking) {
    this(BackendParts.serving(config, layout, hub, instanceId, blocking));
  }

  private BwrapBackend(BackendParts parts) {
    super(parts);
    this.rlimits = new SandboxRlimits(config.maxSessions() + config.poolSize() + 4);
    this.launchers = new LauncherSupervisor(layout, instanceId, blocking);
  }

  /**
   * A backend for commands that only look ({@code doctor}, {@code runs}, {@code sessions}): {@link
   * #unavailableReason()} checks bwrap, the interpreter, the uid range, the workspace file systems
   * and the cgroup hierarchy, without starting the launcher, building the seccomp filter,
   * installing scripts, or making or joining a cgroup. It starts no sandbox.
   */
  public static BwrapBackend inspectOnly(PysandboxConfig config, DataLayout layout) {
    return new BwrapBackend(BackendParts.inspecting(config, layout));
  }

  PysandboxConfig config() {
    return config;
  }

  DataLayout layout() {
    return layout;
  }

  Path hubSocket() {
    return hub.socketPath();
  }

  Executor blocking() {
    return blocking;
  }

  SandboxRlimits rlimits() {
    return rlimits;
  }

  LauncherSupervisor launchers() {
    return launchers;
  }

  @Override
  public String name() {
    return "bwrap";
  }

  @Override
  protected BwrapSetup setUp() {
    BwrapSetup s = BwrapSetup.find(config, layout, instanceId, inspectOnly);
    if (inspectOnly) {
      return s;
    }
    LauncherClient launcher = launchers.start(s);
    if (s.images().available()) {
      s.images().probe(launcher, config.defaultLimits().diskBytes(), s.visibleRoot(), instanceId);
    }
    log.info(
        "bwrap backend ready: python {} ({}), sandboxes run as {}, {}, seccomp {}, disk quota {}",
        s.python().version(),
        s.python().path(),
        s.users(),
        s.cgroups().describe(),
        s.seccompFilter() == null ? "off" : "on",
        s.images().describe());
    return s;
  }

  @Override
  protected Optional<Map<String, Object>> confinementOf(BwrapSetup s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cgroups", s.cgroups().describe());
    m.put(
        "seccomp",
        !config.seccomp()
            ? "off (seccomp=false)"
            : s.seccompFilter() != null ? "on" : "on (the filter is built when a server starts)");
    m.put(
        "rlimits",
        rlimits.describe(config.defaultLimits(), s.cgroups().available(), s.uids() != null));
    m.put("disk_quota", s.images().describe());
    m.put(
        "host_users",
        s.users()
            + (s.uids() != null
                ? ""
                : ": per-user kernel limits (processes, inotify instances, ...) are shared ("
                    + (HostUser.currentUid() == 0
                        ? "sandbox_uid_range=off"
                        : "the server is not root")
                    + ")"));
    return Optional.of(m);
  }

  /**
   * Where sandboxes' directories appear to bwrap: the data directory's {@code sandbox/} itself, or,
   * when the server runs as root, the launcher's bind mount of it.
   */
  public static Path visibleSandboxRoot(DataLayout layout, boolean serverIsRoot) {
    return BwrapSetup.visibleSandboxRoot(layout, serverIsRoot);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: the launcher helper died unasked, taking every sandbox with it; runs once their exits
   * have completed and a new launcher has been started.
   */
  @Override
  public void onSandboxesLost(Runnable action) {
    launchers.onSandboxesLost(action);
  }

  /**
   * The cgroups that are missing, and {@code fs_mounts} directories that sandboxes cannot reach.
   */
  @Override
  public List<String> setupProblems() {
    BwrapSetup s = setup();
    return BwrapSetupCheck.problems(config, s == null ? null : s.cgroups());
  }

  @Override
  protected Launch<BwrapSandbox> begin(BwrapSetup s, String id, SandboxSpec spec, Path workspace) {
    return new BwrapLaunch(this, s, id, spec, workspace);
  }

  @Override
  protected void track(
      String id,
      BwrapSandbox sandbox,
      SandboxSpec.Egress.Door egress,
      Launch<BwrapSandbox> launch) {
    held.put(id, sandbox);
    super.track(id, sandbox, egress, launch);
  }

  /** The seccomp filter that lets Internet sockets be made (loopback is all there is). */
  synchronized Path networkFilter(BwrapSetup s) {
    if (networkFilter == null) {
      networkFilter = SeccompFilter.build(s.python().path(), layout, instanceId, true);
    }
    return networkFilter;
  }

  /**
   * Unmounts and deletes a sandbox's image (through whichever launcher runs now: the one that
   * mounted it may be gone) and gives its uid back. Its processes are gone by now.
   */
  void release(BwrapSandbox sandbox) {
    try {
      WorkspaceImages.Image image = sandbox.image();
      LauncherClient client = image == null ? null : launchers.unlessClosed();
      if (client != null) {
        client
            .release(sandbox.id(), image)
            .get(WorkspaceImages.RELEASE_WAIT_SECONDS, TimeUnit.SECONDS);
      } else if (image != null) {
        awaitLauncherGone();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      log.debug(
          "sandbox {}: interrupted releasing its image; its launcher does when it stops",
          sandbox.id());
    } catch (Exception e) {
      if (launchers.closed()) {
        awaitLauncherGone();
      } else {
        log.error(
            "sandbox {}: could not release its workspace image ({}); a later start-up removes it",
            sandbox.id(),
            e instanceof ExecutionException ? e.getCause().getMessage() : e.toString());
      }
    } finally {
      BwrapSetup s = setup();
      if (s != null && s.uids() != null) {
        s.uids().release(sandbox.hostUser());
      }
      held.remove(sandbox.id());
    }
  }

  /**
   * From now on a sandbox that ends does not ask the launcher to release its image: the launcher
   * releases them all when its input ends (unmounting every host mount in one go), which a queue of
   * single releases ahead of that end would only delay.
   */
  @Override
  public void stopping() {
    launchers.stopping();
  }

  /**
   * Once the backend is closed, the launcher releases every image it mounted when its input ends:
   * waits for that, so that the caller finds plain directories.
   */
  private void awaitLauncherGone() {
    launchers.awaitGone(2 * CLOSE_WAIT_MILLIS);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: their processes, found by their command lines, their cgroups and, as root, their
   * workspace images.
   */
  @Override
  public int reapOrphans(Predicate<String> instanceAlive) {
    Path root = visibleSandboxRoot(layout, HostUser.currentUid() == 0).resolve("workspaces");
    String marker = root + "/sbx-";
    int killed = 0;
    for (long pid : ProcessTable.withCommandLineContaining(marker)) {
      String instance = SandboxIds.instanceOf(commandLineAfter(pid, marker));
      if (instance != null && !instanceAlive.test(instance)) {
        ProcessTable.killNow(pid);
        killed++;
      }
    }
    BwrapSetup s = setup();
    if (s != null && s.cgroups().available()) {
      int groups = s.cgroups().removeDead(instanceAlive);
      if (groups > 0) {
        HousekeepingLog.LOG.warn("removed the cgroups of {} stopped servers", groups);
      }
    }
    if (s != null && HostUser.currentUid() == 0) {
      s.images().releaseDead(launchers::get, instanceAlive);
    }
    return killed;
  }

  private static String commandLineAfter(long pid, String marker) {
    try {
      String cmd =
          new String(
                  Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8)
              .replace('\0', ' ');
      int i = cmd.indexOf(marker);
      return i < 0 ? null : "sbx-" + cmd.substring(i + marker.length());
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * Kills every sandbox, stops the launcher and removes this server's cgroups, waiting at most
   * about a second in all (a client that closes its connection expects the server gone at once).
   */
  @Override
  public void close() {
    List<BwrapSandbox> all = stopLaunching(CLOSE_WAIT_MILLIS);
    for (BwrapSandbox s : all) {
      s.kill("server shutting down");
    }
    // Images mounted by a launcher that died before this one: this one unmounts them too.
    launchers.close(held.values(), CLOSE_WAIT_MILLIS);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
    for (BwrapSandbox s : all) {
      try {
        s.exited().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (Exception e) {
        log.debug("sandbox {} not reaped at shutdown", s.id());
      }
    }
    BwrapSetup s = setup();
    if (s != null) {
      if (s.uids() != null) {
        held.values().forEach(sandbox -> s.uids().release(sandbox.hostUser()));
      }
      held.clear();
      s.cgroups().close(Math.max(100, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }
  }
}

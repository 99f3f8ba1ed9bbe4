package dev.pysandbox.backend.bwrap;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.Cgroups;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.InterpreterProbe;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxFiles;
import dev.pysandbox.backend.SandboxIds;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.util.HousekeepingLog;
import dev.pysandbox.util.Sha256;
import dev.pysandbox.worker.WorkerConnection;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * <p>Longer than most classes because it is the one place a sandbox's parts come together and come
 * apart again: set-up, start (uid, workspace, cgroup, launcher spawn), release, start-up hygiene
 * and shutdown. The parts themselves live in their own classes ({@link SandboxRlimits}, {@link
 * SandboxUids}, {@link WorkspaceImages}, {@link SeccompFilter}, {@link LauncherClient}).
 */
public final class BwrapBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(BwrapBackend.class);
  private static final Path STAGE_BASE = DataLayout.STAGE_BASE;

  /** How long closing waits for the sandboxes to be reaped. */
  private static final long CLOSE_WAIT_MILLIS = 500;

  private final PysandboxConfig config;
  private final DataLayout layout;
  private final WorkerHub hub;
  private final String instanceId;
  private final Executor blocking;
  private final AtomicLong counter = new AtomicLong();
  private final SandboxRlimits rlimits;
  private final Map<String, BwrapSandbox> live = new ConcurrentHashMap<>();

  /** Sandboxes whose workspace and uid are not released yet, running or not. */
  private final Map<String, BwrapSandbox> held = new ConcurrentHashMap<>();

  private volatile Setup setup;
  private Path networkFilter;
  private volatile Runnable onSandboxesLost = () -> {};
  private String unavailable;
  private LauncherClient launcher;
  private volatile boolean closed;
  private volatile boolean stopping;

  /** Only looks (see {@link #inspectOnly}): starts no launcher and no sandbox. */
  private final boolean inspectOnly;

  /**
   * Everything found once at set-up.
   *
   * @param runAs the host user every sandbox runs as when {@code uids} is null; otherwise the
   *     launcher's fallback, or null
   * @param uids a host uid per sandbox, or null
   */
  private record Setup(
      InterpreterInfo python,
      HostUser runAs,
      SandboxUids uids,
      WorkspaceImages images,
      Path visibleRoot,
      String runnerName,
      String analyzerName,
      String launcherName,
      String forwarderName,
      Cgroups cgroups,
      Path seccompFilter) {
    Path visibleLib() {
      return visibleRoot.resolve("lib");
    }

    Path visibleWorkspaces() {
      return visibleRoot.resolve("workspaces");
    }
  }

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
    this(config, layout, Objects.requireNonNull(hub, "hub"), instanceId, blocking, false);
  }

  private BwrapBackend(
      PysandboxConfig config,
      DataLayout layout,
      WorkerHub hub,
      String instanceId,
      Executor blocking,
      boolean inspectOnly) {
    this.config = config;
    this.layout = layout;
    this.hub = hub;
    this.instanceId = instanceId;
    this.blocking = blocking;
    this.inspectOnly = inspectOnly;
    this.rlimits = new SandboxRlimits(config.maxSessions() + config.poolSize() + 4);
  }

  /**
   * A backend for commands that only look ({@code doctor}, {@code runs}, {@code sessions}): {@link
   * #unavailableReason()} checks bwrap, the interpreter, the uid range, the workspace file systems
   * and the cgroup hierarchy, without starting the launcher, building the seccomp filter,
   * installing scripts, or making or joining a cgroup. It starts no sandbox.
   */
  public static BwrapBackend inspectOnly(PysandboxConfig config, DataLayout layout) {
    return new BwrapBackend(config, layout, null, null, Runnable::run, true);
  }

  @Override
  public String name() {
    return "bwrap";
  }

  @Override
  public synchronized Optional<String> unavailableReason() {
    if (setup == null && unavailable == null) {
      try {
        setup = setUp();
      } catch (PysandboxException e) {
        unavailable = e.getMessage();
      }
    }
    return Optional.ofNullable(unavailable);
  }

  @Override
  public Optional<InterpreterInfo> interpreter() {
    Setup s = setup;
    return s == null ? Optional.empty() : Optional.of(s.python());
  }

  @Override
  public Optional<String> sandboxUsers() {
    Setup s = setup;
    return s == null ? Optional.empty() : Optional.of(users(s));
  }

  private static String users(Setup s) {
    return s.uids() != null
        ? "a uid of its own per sandbox, from " + s.uids().range()
        : s.runAs().name() + " (uid " + s.runAs().uid() + "), shared by every sandbox";
  }

  private Setup setUp() {
    Path bwrap = config.bwrap();
    if (!Files.isExecutable(bwrap)) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "bwrap: "
              + bwrap
              + " not found: install bubblewrap (Debian: apt-get install bubblewrap)");
    }
    InterpreterInfo python = InterpreterProbe.probe(config.python());
    int uid = HostUser.currentUid();
    HostUser runAs;
    Path visibleRoot = layout.sandboxRoot();
    SandboxUids uids = null;
    if (uid == 0) {
      uids =
          config
              .sandboxUidRange()
              .map(inspectOnly ? SandboxUids::inspect : SandboxUids::open)
              .orElse(null);
      runAs = HostUser.lookup(config.sandboxUser()).orElse(null);
      if (runAs == null && uids == null) {
        throw new PysandboxException(
            ErrorCode.BACKEND_UNAVAILABLE,
            "bwrap: the server runs as root and sandbox_uid_range is off, so sandboxes run as the"
                + " unprivileged user '"
                + config.sandboxUser()
                + "', which does not exist: create it with 'useradd --system"
                + " --no-create-home --shell /usr/sbin/nologin "
                + config.sandboxUser()
                + "' (scripts/setup.sh does), set PYSANDBOX_SANDBOX_USER, or set"
                + " sandbox_uid_range");
      }
      if (runAs != null && runAs.uid() == 0) {
        throw new PysandboxException(
            ErrorCode.BACKEND_UNAVAILABLE, "bwrap: sandbox_user must not have uid 0");
      }
      visibleRoot = visibleSandboxRoot(layout, true);
    } else {
      runAs = new HostUser(System.getProperty("user.name"), uid, -1);
    }
    WorkspaceImages images = WorkspaceImages.detect(config.diskQuotaFs(), uid == 0, layout);
    if (inspectOnly) {
      Cgroups cgroups =
          config.cgroups() ? Cgroups.inspect() : Cgroups.disabled("turned off (cgroups=false)");
      return new Setup(
          python, runAs, uids, images, visibleRoot, null, null, null, null, cgroups, null);
    }
    String runnerName;
    String analyzerName;
    String launcherName;
    String forwarderName;
    try {
      Files.createDirectories(layout.workspacesDir());
      Files.createDirectories(layout.runtimeDir());
      if (uid == 0) {
        Files.createDirectories(layout.imagesDir());
        Files.setPosixFilePermissions(
            layout.imagesDir(), PosixFilePermissions.fromString("rwx------"));
      }
      Files.setPosixFilePermissions(
          layout.sandboxRoot(), PosixFilePermissions.fromString("rwxr-xr-x"));
      Files.setPosixFilePermissions(
          layout.workspacesDir(), PosixFilePermissions.fromString("rwx--x--x"));
      runnerName =
          SandboxFiles.installScript("/dev/pysandbox/worker/runner.py", "runner", layout.libDir());
      analyzerName =
          SandboxFiles.installScript(
              "/dev/pysandbox/worker/analyzer.py", "analyzer", layout.libDir());
      forwarderName =
          SandboxFiles.installScript(
              "/dev/pysandbox/worker/egress_forward.py", "egress_forward", layout.libDir());
      SandboxFiles.installEtc(layout.libDir());
      launcherName =
          SandboxFiles.installScript(
              "/dev/pysandbox/backend/bwrap/launcher.py", "launcher", layout.runtimeDir());
    } catch (IOException | UncheckedIOException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "bwrap: cannot prepare " + layout.sandboxRoot() + ": " + e.getMessage(),
          e);
    }
    Path filter = config.seccomp() ? SeccompFilter.build(python.path(), layout, instanceId) : null;
    Cgroups cgroups =
        config.cgroups()
            ? Cgroups.detect(layout.identity(), instanceId)
            : Cgroups.disabled("turned off (cgroups=false)");
    cgroups
        .unavailableReason()
        .ifPresent(
            why ->
                log.warn(
                    "no cgroup per sandbox ({}); memory and processes are bounded by rlimits only",
                    why));
    Setup s =
        new Setup(
            python,
            runAs,
            uids,
            images,
            visibleRoot,
            runnerName,
            analyzerName,
            launcherName,
            forwarderName,
            cgroups,
            filter);
    launcher = startLauncher(s);
    if (images.available()) {
      images.probe(launcher, config.defaultLimits().diskBytes(), visibleRoot, instanceId);
    }
    log.info(
        "bwrap backend ready: python {} ({}), sandboxes run as {}, {}, seccomp {}, disk quota {}",
        python.version(),
        python.path(),
        users(s),
        cgroups.describe(),
        filter == null ? "off" : "on",
        images.describe());
    return s;
  }

  @Override
  public Optional<Map<String, Object>> confinement() {
    Setup s = setup;
    if (s == null) {
      return Optional.empty();
    }
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
        users(s)
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
    if (!serverIsRoot) {
      return layout.sandboxRoot();
    }
    String hash = Sha256.hex(layout.dataDir().toString());
    return STAGE_BASE.resolve(hash.substring(0, 12));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: the launcher helper died unasked, taking every sandbox with it; runs once their exits
   * have completed and a new launcher has been started.
   */
  @Override
  public void onSandboxesLost(Runnable action) {
    this.onSandboxesLost = Objects.requireNonNull(action, "action");
  }

  /**
   * The cgroups that are missing, and {@code fs_mounts} directories that sandboxes cannot reach.
   */
  @Override
  public List<String> setupProblems() {
    Setup s = setup;
    return BwrapSetupCheck.problems(config, s == null ? null : s.cgroups());
  }

  private synchronized LauncherClient launcher() {
    if (closed) {
      throw new IllegalStateException("the bwrap backend is closed");
    }
    if (launcher == null || !launcher.isAlive()) {
      log.warn("the sandbox launcher is gone; starting a new one");
      launcher = startLauncher(setup);
    }
    return launcher;
  }

  private LauncherClient startLauncher(Setup s) {
    boolean root = HostUser.currentUid() == 0;
    try {
      return LauncherClient.start(
          s.python().path(),
          layout.runtimeDir().resolve(s.launcherName()),
          instanceId,
          root && s.runAs() != null ? s.runAs().uid() : null,
          root && s.runAs() != null ? s.runAs().gid() : null,
          root ? new LauncherClient.Stage(layout.sandboxRoot(), s.visibleRoot()) : null,
          this::launcherDied);
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "bwrap: cannot start the sandbox launcher: " + e.getMessage(),
          e);
    }
  }

  /**
   * The launcher died with every sandbox in it: start the next one now, not at the next call, and
   * tell whoever keeps sandboxes ready (the warm pool refills at once).
   */
  private void launcherDied() {
    blocking.execute(
        () -> {
          try {
            launcher();
          } catch (RuntimeException e) {
            log.error("cannot restart the sandbox launcher: {}", e.getMessage());
          }
          onSandboxesLost.run();
        });
  }

  @Override
  public CompletableFuture<Sandbox> start(SandboxSpec spec) {
    if (inspectOnly) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("this bwrap backend only inspects; it starts no sandbox"));
    }
    Optional<String> reason = unavailableReason();
    if (reason.isPresent()) {
      return CompletableFuture.failedFuture(
          new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, reason.get()));
    }
    Setup s = setup;
    String id = SandboxIds.of(instanceId, counter.incrementAndGet());
    Path workspace = layout.workspacesDir().resolve(id);
    boolean root = HostUser.currentUid() == 0;
    HostUser user;
    try {
      user = s.uids() != null ? s.uids().allocate() : s.runAs();
    } catch (PysandboxException e) {
      return CompletableFuture.failedFuture(e);
    }
    WorkspaceImages.Image image =
        s.images().available()
            ? s.images()
                .image(id, spec.limits().diskBytes(), workspace, s.visibleWorkspaces().resolve(id))
            : null;
    WorkerConnection worker;
    LauncherClient.Child child;
    LauncherClient client;
    SandboxSpec.Egress.Door door = null;
    try {
      Path envDir = null;
      SandboxSpec.Environment env = spec.environment();
      if (env != null) {
        envDir = visible(s, env.dir());
        if (env.writable() && root) {
          Files.setAttribute(env.dir(), "unix:uid", user.uid(), LinkOption.NOFOLLOW_LINKS);
          Files.setAttribute(env.dir(), "unix:gid", user.gid(), LinkOption.NOFOLLOW_LINKS);
        }
      }
      Path filter = s.seccompFilter();
      if (spec.egress() != null) {
        door = spec.egress().open(id);
        if (filter != null) {
          filter = networkFilter(s);
        }
      }
      BwrapCommand.Extras extras =
          new BwrapCommand.Extras(envDir, door == null ? null : door.socket(), s.forwarderName());
      Files.createDirectory(workspace);
      Files.setPosixFilePermissions(workspace, PosixFilePermissions.fromString("rwx------"));
      if (root && image == null) {
        Files.setAttribute(workspace, "unix:uid", user.uid());
        Files.setAttribute(workspace, "unix:gid", user.gid());
      }
      worker = hub.expect(id, spec.outputLimit(), spec.idleOutputMax());
      List<String> argv =
          BwrapCommand.build(
              config.bwrap(),
              s.python(),
              s.visibleWorkspaces().resolve(id),
              s.visibleLib(),
              s.runnerName(),
              s.analyzerName(),
              reachable(s, spec),
              filter != null,
              extras);
      List<Path> groups =
          s.cgroups().available() ? s.cgroups().create(id, spec.limits()) : List.of();
      client = launcher();
      child =
          client.spawn(
              id,
              argv,
              hub.socketPath(),
              WorkerHub.token(worker),
              filter,
              groups,
              rlimits.of(spec.limits(), s.cgroups().available(), s.uids() != null),
              root ? user : null,
              image);
    } catch (IOException | RuntimeException e) {
      if (door != null) {
        door.close();
      }
      s.cgroups().remove(id);
      if (s.uids() != null) {
        s.uids().release(user);
      }
      deleteEmpty(workspace);
      return CompletableFuture.failedFuture(
          new PysandboxException(
              ErrorCode.BACKEND_UNAVAILABLE,
              "bwrap: cannot start sandbox " + id + ": " + e.getMessage(),
              e));
    }
    BwrapSandbox sandbox =
        new BwrapSandbox(
            id,
            workspace,
            worker,
            child,
            client,
            blocking,
            spec.limits(),
            s.cgroups(),
            user,
            image,
            this::release);
    held.put(id, sandbox);
    live.put(id, sandbox);
    SandboxSpec.Egress.Door opened = door;
    sandbox
        .exited()
        .whenComplete(
            (exit, err) -> {
              live.remove(id);
              if (opened != null) {
                opened.close();
              }
            });
    long timeout = config.startupTimeoutSeconds();
    return worker
        .ready()
        .orTimeout(timeout, TimeUnit.SECONDS)
        .handle(
            (ready, err) -> {
              if (err == null) {
                return (Sandbox) sandbox;
              }
              String printed = worker.partial().stderr().text().strip();
              sandbox
                  .kill("failed to start")
                  .whenCompleteAsync(
                      (report, killErr) -> {
                        sandbox.releaseWorkspace();
                        deleteEmpty(workspace);
                      },
                      blocking);
              String why =
                  err instanceof java.util.concurrent.TimeoutException
                          || err.getCause() instanceof java.util.concurrent.TimeoutException
                      ? "not ready after " + timeout + " s (startup_timeout)"
                      : "its runner stopped before it was ready";
              throw new PysandboxException(
                  ErrorCode.BACKEND_UNAVAILABLE,
                  "bwrap: sandbox "
                      + id
                      + " "
                      + why
                      + (printed.isEmpty() ? "" : "; it printed: " + printed));
            });
  }

  /**
   * A host path under the data directory's {@code sandbox/} as bwrap, running as the sandbox's
   * user, reaches it.
   */
  private Path visible(Setup s, Path hostPath) {
    Path root = layout.sandboxRoot();
    if (!hostPath.startsWith(root)) {
      throw new IllegalArgumentException(
          hostPath + " is not under " + root + ": sandboxes' users cannot reach it");
    }
    return s.visibleRoot().resolve(root.relativize(hostPath).toString());
  }

  /**
   * The spec with its host directories under the data directory's {@code sandbox/} (a wheelhouse
   * the server copied for a build) named as bwrap reaches them, through the launcher's stage.
   */
  private SandboxSpec reachable(Setup s, SandboxSpec spec) {
    return spec.withMounts(
        spec.mounts().stream()
            .map(
                m ->
                    m.source().startsWith(layout.sandboxRoot())
                        ? new SandboxSpec.HostMount(m.name(), visible(s, m.source()))
                        : m)
            .toList());
  }

  /** The seccomp filter that lets Internet sockets be made (loopback is all there is). */
  private synchronized Path networkFilter(Setup s) {
    if (networkFilter == null) {
      networkFilter = SeccompFilter.build(s.python().path(), layout, instanceId, true);
    }
    return networkFilter;
  }

  /**
   * Unmounts and deletes a sandbox's image (through whichever launcher runs now: the one that
   * mounted it may be gone) and gives its uid back. Its processes are gone by now.
   */
  private void release(BwrapSandbox sandbox) {
    try {
      WorkspaceImages.Image image = sandbox.image();
      LauncherClient client = image == null ? null : launcherUnlessClosed();
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
      if (closed) {
        awaitLauncherGone();
      } else {
        log.error(
            "sandbox {}: could not release its workspace image ({}); a later start-up removes it",
            sandbox.id(),
            e instanceof ExecutionException ? e.getCause().getMessage() : e.toString());
      }
    } finally {
      Setup s = setup;
      if (s != null && s.uids() != null) {
        s.uids().release(sandbox.hostUser());
      }
      held.remove(sandbox.id());
    }
  }

  private synchronized LauncherClient launcherUnlessClosed() {
    return closed || stopping ? null : launcher();
  }

  /**
   * From now on a sandbox that ends does not ask the launcher to release its image: the launcher
   * releases them all when its input ends (unmounting every host mount in one go), which a queue of
   * single releases ahead of that end would only delay.
   */
  @Override
  public void stopping() {
    stopping = true;
  }

  /**
   * Once the backend is closed, the launcher releases every image it mounted when its input ends:
   * waits for that, so that the caller finds plain directories.
   */
  private void awaitLauncherGone() {
    LauncherClient last;
    synchronized (this) {
      last = launcher;
    }
    if (last != null) {
      last.awaitExit(2 * CLOSE_WAIT_MILLIS);
    }
  }

  private static void deleteEmpty(Path dir) {
    try {
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      log.debug("{} stays: {}", dir, e.toString());
    }
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
    Setup s = setup;
    if (s != null && s.cgroups().available()) {
      int groups = s.cgroups().removeDead(instanceAlive);
      if (groups > 0) {
        HousekeepingLog.LOG.warn("removed the cgroups of {} stopped servers", groups);
      }
    }
    if (s != null && HostUser.currentUid() == 0) {
      s.images().releaseDead(this::launcher, instanceAlive);
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
    List<BwrapSandbox> all = List.copyOf(live.values());
    for (BwrapSandbox s : all) {
      s.kill("server shutting down");
    }
    synchronized (this) {
      closed = true;
      if (launcher != null) {
        // Images mounted by a launcher that died before this one: this one unmounts them too. Its
        // own it releases when its input ends, unmounting them all first in one go.
        int images = 0;
        for (BwrapSandbox s : held.values()) {
          if (s.image() != null && !s.released()) {
            if (s.launcher() != launcher) {
              launcher.release(s.id(), s.image());
            }
            images++;
          }
        }
        // Deleting an image takes a few milliseconds (more on a busy host): wait for them all
        // (within reason; what is left is deleted by the next server on this data directory).
        launcher.close(Math.min(CLOSE_WAIT_MILLIS + 20L * images, 10_000));
      }
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
    for (BwrapSandbox s : all) {
      try {
        s.exited().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (Exception e) {
        log.debug("sandbox {} not reaped at shutdown", s.id());
      }
    }
    Setup s = setup;
    if (s != null) {
      if (s.uids() != null) {
        held.values().forEach(sandbox -> s.uids().release(sandbox.hostUser()));
      }
      held.clear();
      s.cgroups().close(Math.max(100, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }
  }
}

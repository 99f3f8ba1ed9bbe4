package dev.pysandbox.backend.bwrap;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.Cgroups;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.InterpreterProbe;
import dev.pysandbox.backend.Limits;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.worker.WorkerConnection;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default backend: each sandbox is a bubblewrap process tree (see {@link BwrapCommand}) started
 * by the launcher helper. When the server runs as root, sandboxes run as the configured
 * unprivileged host user, and the sandbox directory is bind-mounted by the launcher at a path that
 * user can reach.
 */
public final class BwrapBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(BwrapBackend.class);
  private static final Path STAGE_BASE = Path.of("/run/pysandbox-stage");
  private static final long GIB = 1024L * Limits.MIB;

  /** RLIMIT_CPU, a backstop for a server that no longer watches: a day of CPU. */
  static final long CPU_SECONDS_BACKSTOP = 86_400;

  /** RLIMIT_NOFILE: open files per process. */
  static final long OPEN_FILES = 1024;

  /**
   * RLIMIT_NPROC with a cgroup: counted per host user over every sandbox (they share one), so it
   * guards the host; the pids cgroup bounds each sandbox.
   */
  static final long HOST_USER_PROCESSES = 8192;

  /** How long closing waits for the sandboxes to be reaped. */
  private static final long CLOSE_WAIT_MILLIS = 500;

  private final PysandboxConfig config;
  private final DataLayout layout;
  private final WorkerHub hub;
  private final String instanceId;
  private final Executor blocking;
  private final AtomicLong counter = new AtomicLong();
  private final Map<String, BwrapSandbox> live = new ConcurrentHashMap<>();

  private volatile Setup setup;
  private volatile Runnable onLauncherLost = () -> {};
  private String unavailable;
  private LauncherClient launcher;

  /** Everything found once at set-up. */
  private record Setup(
      InterpreterInfo python,
      HostUser runAs,
      Path visibleRoot,
      String runnerName,
      String launcherName,
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
    this.config = config;
    this.layout = layout;
    this.hub = hub;
    this.instanceId = instanceId;
    this.blocking = blocking;
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

  /** The interpreter sandboxes run, once set-up has succeeded. */
  public Optional<InterpreterInfo> interpreter() {
    Setup s = setup;
    return s == null ? Optional.empty() : Optional.of(s.python());
  }

  /** The host user sandboxes run as. */
  public Optional<HostUser> sandboxUser() {
    Setup s = setup;
    return s == null ? Optional.empty() : Optional.of(s.runAs());
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
    if (uid == 0) {
      runAs =
          HostUser.lookup(config.sandboxUser())
              .orElseThrow(
                  () ->
                      new PysandboxException(
                          ErrorCode.BACKEND_UNAVAILABLE,
                          "bwrap: the server runs as root, so sandboxes run as the unprivileged"
                              + " user '"
                              + config.sandboxUser()
                              + "', which does not exist: create it with 'useradd --system"
                              + " --no-create-home --shell /usr/sbin/nologin "
                              + config.sandboxUser()
                              + "' (scripts/setup.sh does) or set PYSANDBOX_SANDBOX_USER"));
      if (runAs.uid() == 0) {
        throw new PysandboxException(
            ErrorCode.BACKEND_UNAVAILABLE, "bwrap: sandbox_user must not have uid 0");
      }
      visibleRoot = visibleSandboxRoot(layout, true);
    } else {
      runAs = new HostUser(System.getProperty("user.name"), uid, -1);
    }
    String runnerName;
    String launcherName;
    try {
      Files.createDirectories(layout.workspacesDir());
      Files.createDirectories(layout.runtimeDir());
      Files.setPosixFilePermissions(
          layout.sandboxRoot(), PosixFilePermissions.fromString("rwxr-xr-x"));
      Files.setPosixFilePermissions(
          layout.workspacesDir(), PosixFilePermissions.fromString("rwx--x--x"));
      runnerName =
          SandboxFiles.installScript("/dev/pysandbox/worker/runner.py", "runner", layout.libDir());
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
    Path filter = config.seccomp() ? buildSeccompFilter(python.path()) : null;
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
    Setup s = new Setup(python, runAs, visibleRoot, runnerName, launcherName, cgroups, filter);
    launcher = startLauncher(s);
    log.info(
        "bwrap backend ready: python {} ({}), sandboxes run as {} (uid {}), {}, seccomp {}",
        python.version(),
        python.path(),
        runAs.name(),
        runAs.uid(),
        cgroups.describe(),
        filter == null ? "off" : "on");
    return s;
  }

  /**
   * The seccomp filter, generated with libseccomp's Python binding the first time a version of the
   * generator runs in this data directory ({@code seccomp_filter-<hash>.bpf}, written under a
   * temporary name and renamed, so that servers sharing the directory never read half a file).
   * Fails closed: with seccomp on and no way to build the filter, no sandbox starts.
   */
  private Path buildSeccompFilter(Path python) {
    try {
      String script =
          SandboxFiles.installScript(
              "/dev/pysandbox/backend/bwrap/seccomp_filter.py", "seccomp_filter", layout.libDir());
      Path out = layout.runtimeDir().resolve(script.replace(".py", ".bpf"));
      if (Files.isRegularFile(out) && Files.size(out) > 0) {
        return out;
      }
      Path tmp = layout.runtimeDir().resolve(out.getFileName() + ".tmp-" + instanceId);
      Process p =
          new ProcessBuilder(
                  python.toString(),
                  "-I",
                  layout.libDir().resolve(script).toString(),
                  tmp.toString())
              .redirectErrorStream(true)
              .start();
      String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      boolean built = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
      if (!built || !Files.isRegularFile(tmp) || Files.size(tmp) == 0) {
        p.destroyForcibly();
        Files.deleteIfExists(tmp);
        throw new PysandboxException(
            ErrorCode.BACKEND_UNAVAILABLE,
            "bwrap: cannot build the seccomp filter"
                + (printed.contains("No module named 'seccomp'")
                    ? ": libseccomp's Python binding is missing (Debian: apt-get install"
                        + " python3-seccomp; scripts/setup.sh does)"
                    : ": " + printed.strip())
                + "; or set seccomp=false to run without it");
      }
      Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      return out;
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "bwrap: cannot build the seccomp filter: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "bwrap: interrupted building the seccomp filter", e);
    }
  }

  /** How sandboxes are bounded on this host, for check_setup and doctor; empty before set-up. */
  public Optional<Map<String, Object>> confinement() {
    Setup s = setup;
    if (s == null) {
      return Optional.empty();
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cgroups", s.cgroups().describe());
    m.put("seccomp", s.seccompFilter() == null ? "off (seccomp=false)" : "on");
    m.put(
        "rlimits",
        "address space, CPU seconds ("
            + CPU_SECONDS_BACKSTOP
            + "), open files ("
            + OPEN_FILES
            + "), file size (= disk quota), processes of the sandbox user ("
            + userProcesses(config.defaultLimits(), s.cgroups().available())
            + ")");
    return Optional.of(m);
  }

  /**
   * The rlimits of a sandbox: a second line behind its cgroup, and the only one where there is no
   * cgroup. The address-space limit leaves room for what numpy and its thread pools reserve without
   * touching; without a cgroup it is the memory bound itself, so it is tighter.
   */
  /**
   * RLIMIT_NPROC. Without a cgroup it is the only process bound, shared by all sandboxes (one host
   * user): room for every session and pooled sandbox at its pids limit, so that a fork bomb cannot
   * take the host down (it can still crowd out the other sandboxes' forks).
   */
  long userProcesses(Limits limits, boolean cgroup) {
    if (cgroup) {
      return HOST_USER_PROCESSES;
    }
    return (long) limits.pids() * (config.maxSessions() + config.poolSize() + 4);
  }

  Map<String, long[]> rlimits(Limits limits, boolean cgroup) {
    long as =
        cgroup
            ? limits.memoryBytes() + 4 * GIB
            : Math.max(2 * limits.memoryBytes(), limits.memoryBytes() + GIB);
    Map<String, long[]> r = new LinkedHashMap<>();
    r.put("AS", new long[] {as, as});
    r.put("CPU", new long[] {CPU_SECONDS_BACKSTOP, CPU_SECONDS_BACKSTOP + 5});
    r.put("NOFILE", new long[] {OPEN_FILES, OPEN_FILES});
    r.put("FSIZE", new long[] {limits.diskBytes(), limits.diskBytes()});
    long nproc = userProcesses(limits, cgroup);
    r.put("NPROC", new long[] {nproc, nproc});
    r.put("CORE", new long[] {0, 0});
    return r;
  }

  /**
   * Where sandboxes' directories appear to bwrap: the data directory's {@code sandbox/} itself, or,
   * when the server runs as root, the launcher's bind mount of it.
   */
  public static Path visibleSandboxRoot(DataLayout layout, boolean serverIsRoot) {
    if (!serverIsRoot) {
      return layout.sandboxRoot();
    }
    String hash = SandboxFiles.sha256(layout.dataDir().toString().getBytes(StandardCharsets.UTF_8));
    return STAGE_BASE.resolve(hash.substring(0, 12));
  }

  /**
   * Runs {@code action} whenever the launcher helper dies unasked, taking every sandbox with it
   * (the warm pool refills at once, forgetting any backoff). Runs after the sandboxes' exits have
   * completed and a new launcher has been started.
   */
  public void onLauncherLost(Runnable action) {
    this.onLauncherLost = Objects.requireNonNull(action, "action");
  }

  private synchronized LauncherClient launcher() {
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
          root ? s.runAs().uid() : null,
          root ? s.runAs().gid() : null,
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
          onLauncherLost.run();
        });
  }

  @Override
  public CompletableFuture<Sandbox> start(SandboxSpec spec) {
    Optional<String> reason = unavailableReason();
    if (reason.isPresent()) {
      return CompletableFuture.failedFuture(
          new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, reason.get()));
    }
    Setup s = setup;
    String id = "sbx-" + instanceId + "-" + Long.toHexString(counter.incrementAndGet());
    Path workspace = layout.workspacesDir().resolve(id);
    WorkerConnection worker;
    LauncherClient.Child child;
    LauncherClient client;
    try {
      Files.createDirectory(workspace);
      Files.setPosixFilePermissions(workspace, PosixFilePermissions.fromString("rwx------"));
      if (HostUser.currentUid() == 0) {
        Files.setAttribute(workspace, "unix:uid", s.runAs().uid());
        Files.setAttribute(workspace, "unix:gid", s.runAs().gid());
      }
      worker = hub.expect(id, spec.outputLimit(), spec.idleOutputMax());
      List<String> argv =
          BwrapCommand.build(
              config.bwrap(),
              s.python(),
              s.visibleWorkspaces().resolve(id),
              s.visibleLib(),
              s.runnerName(),
              spec.preload(),
              spec.limits().tmpBytes(),
              s.seccompFilter() != null);
      List<Path> groups =
          s.cgroups().available() ? s.cgroups().create(id, spec.limits()) : List.of();
      client = launcher();
      child =
          client.spawn(
              id,
              argv,
              hub.socketPath(),
              WorkerHub.token(worker),
              s.seccompFilter(),
              groups,
              rlimits(spec.limits(), s.cgroups().available()));
    } catch (IOException | RuntimeException e) {
      s.cgroups().remove(id);
      return CompletableFuture.failedFuture(
          new PysandboxException(
              ErrorCode.BACKEND_UNAVAILABLE,
              "bwrap: cannot start sandbox " + id + ": " + e.getMessage(),
              e));
    }
    BwrapSandbox sandbox =
        new BwrapSandbox(
            id, workspace, worker, child, client, blocking, spec.limits(), s.cgroups());
    live.put(id, sandbox);
    sandbox.exited().whenComplete((exit, err) -> live.remove(id));
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
              sandbox.kill("failed to start");
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
   * Kills sandboxes that server processes now dead left behind, found by their command lines.
   *
   * @param instanceAlive tells whether a server instance id belongs to a live server
   * @return how many processes were killed
   */
  public int reapOrphans(Predicate<String> instanceAlive) {
    Path root = visibleSandboxRoot(layout, HostUser.currentUid() == 0).resolve("workspaces");
    String marker = root + "/sbx-";
    int killed = 0;
    for (long pid : ProcessTable.withCommandLineContaining(marker)) {
      String instance = instanceOf(commandLineAfter(pid, marker));
      if (instance != null && !instanceAlive.test(instance)) {
        ProcessTable.killNow(pid);
        killed++;
      }
    }
    Setup s = setup;
    if (s != null && s.cgroups().available()) {
      int groups = s.cgroups().removeDead(instanceAlive);
      if (groups > 0) {
        log.warn("removed the cgroups of {} stopped servers", groups);
      }
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

  /** The server instance a sandbox id or workspace name belongs to, or {@code null}. */
  public static String instanceOf(String sandboxId) {
    if (sandboxId == null || !sandboxId.startsWith("sbx-")) {
      return null;
    }
    String[] parts = sandboxId.split("[-/ ]");
    return parts.length >= 3 ? parts[1] : null;
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
      if (launcher != null) {
        launcher.close();
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
      s.cgroups().close(Math.max(100, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }
  }
}

package dev.pysandbox.backend.docker;

import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ulimit;
import com.github.dockerjava.api.model.Volume;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.InterpreterProbe;
import dev.pysandbox.backend.RunnerLaunch;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxFiles;
import dev.pysandbox.backend.SandboxIds;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.util.HousekeepingLog;
import dev.pysandbox.worker.WorkerConnection;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each sandbox is a container of a container engine (Docker, or Podman's compatible service)
 * reached through the Docker Engine API at {@code docker_host}: no network ({@code none}, only
 * loopback), every capability dropped, {@code no-new-privileges}, a read-only root, a size-capped
 * tmpfs {@code /tmp}, the workspace bound at {@code /mnt/data}, an unprivileged user, memory (swap
 * equal to memory), pids and CPU limits, and labels that say whose it is. A session holds one
 * container; a one-shot run takes one from the warm pool and it is never reused.
 *
 * <p>The runner is not in the image: it is bound read-only at {@code /opt/pysandbox} with its init
 * ({@code container_init.py}), so any image with python3 works. Nothing is inherited across the
 * engine, so the runner connects its three channels itself through a door, a listening socket of
 * the {@link WorkerHub} made for this one sandbox and bound into it (which needs an engine on this
 * host: the workspace is bound from it too).
 */
public final class DockerBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(DockerBackend.class);

  static final String LABEL_INSTANCE = "dev.pysandbox.instance";
  static final String LABEL_SANDBOX = "dev.pysandbox.sandbox";
  static final String LABEL_DATA_DIR = "dev.pysandbox.data-dir";

  /** Where the door's directory appears in the container. */
  static final String DOOR_DIR = "/run/pysandbox/worker";

  static final String DOOR_SOCKET = "w.sock";
  static final String INIT = RunnerLaunch.DIR + "/init.py";

  /** The user code runs as in the container when the server is root: not root, not nobody. */
  static final int SANDBOX_UID = 1000;

  /** Open files per process (as bwrap's sandboxes). */
  static final long OPEN_FILES = 1024;

  /** Processes of the one host user all containers run as (RLIMIT_NPROC counts them together). */
  static final long HOST_USER_PROCESSES = 8192;

  /** Room in the pids limit for gVisor's own host threads (see {@link #runtimeThreads}). */
  static final long RUNSC_THREADS = 64;

  private static final long KILL_WAIT_SECONDS = 20;

  private final PysandboxConfig config;
  private final DataLayout layout;
  private final WorkerHub hub;
  private final String instanceId;
  private final Executor blocking;
  private final boolean inspectOnly;
  private final AtomicLong counter = new AtomicLong();
  private final Map<String, DockerSandbox> live = new ConcurrentHashMap<>();
  private volatile Setup setup;
  private String unavailable;
  private volatile boolean closed;

  private record Setup(
      DockerEngine engine,
      String engineName,
      InterpreterInfo python,
      HostUser user,
      List<Bind> files,
      Path doors,
      Map<Boolean, String> seccomp) {}

  public DockerBackend(
      PysandboxConfig config,
      DataLayout layout,
      WorkerHub hub,
      String instanceId,
      Executor blocking) {
    this(config, layout, Objects.requireNonNull(hub, "hub"), instanceId, blocking, false);
  }

  private DockerBackend(
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
  }

  /**
   * A backend for commands that only look: checks the engine and the image and runs the interpreter
   * probe in one short-lived container (as a server's set-up does), but makes no door directory, no
   * seccomp profile and no sandbox.
   */
  public static DockerBackend inspectOnly(PysandboxConfig config, DataLayout layout) {
    return new DockerBackend(config, layout, null, null, Runnable::run, true);
  }

  @Override
  public String name() {
    return "docker";
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

  private static PysandboxException unavailable(String message) {
    return new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, "docker: " + message);
  }

  private Setup setUp() {
    String host = config.dockerHost();
    if (!PysandboxConfig.localEngine(host)) {
      throw unavailable(
          host
              + " is not an engine on this host: the docker backend binds host directories into"
              + " its containers, so it needs a unix:// socket (set docker_host or DOCKER_HOST)");
    }
    if (!Files.exists(Path.of(host.substring("unix://".length())))) {
      throw unavailable(
          "no engine at "
              + host
              + ": start Docker, or Podman's service (scripts/podman-service.sh start DIR prints"
              + " the DOCKER_HOST to use), and set docker_host or DOCKER_HOST");
    }
    DockerEngine engine = new DockerEngine(host, 32);
    try {
      return setUp(engine);
    } catch (RuntimeException e) {
      engine.close();
      throw e instanceof PysandboxException p ? p : unavailable(e.getMessage());
    }
  }

  private Setup setUp(DockerEngine engine) {
    String host = engine.host();
    com.github.dockerjava.api.model.Version version;
    try {
      engine.ping();
      version = engine.version();
    } catch (RuntimeException e) {
      throw unavailable("the engine at " + host + " does not answer: " + e.getMessage());
    }
    String image = config.dockerImage();
    if (!engine.hasImage(image)) {
      throw unavailable(
          "the engine at "
              + host
              + " has no image "
              + image
              + ": build it with 'DOCKER_HOST="
              + host
              + " scripts/build-image.sh', or set docker_image to an image with python3");
    }
    boolean root = HostUser.currentUid() == 0;
    HostUser user =
        root
            ? new HostUser(Integer.toString(SANDBOX_UID), SANDBOX_UID, SANDBOX_UID)
            : new HostUser(System.getProperty("user.name"), HostUser.currentUid(), currentGid());
    Path lib = layout.libDir();
    List<Bind> files = new ArrayList<>();
    Path doors =
        root
            ? Path.of("/run/pysandbox/worker", layout.identity())
            : layout.runtimeDir().resolve("doors");
    try {
      Files.createDirectories(layout.workspacesDir());
      Files.setPosixFilePermissions(
          layout.sandboxRoot(), PosixFilePermissions.fromString("rwxr-xr-x"));
      Files.setPosixFilePermissions(
          layout.workspacesDir(), PosixFilePermissions.fromString("rwx--x--x"));
      files.add(script(lib, "/dev/pysandbox/worker/runner.py", "runner", RunnerLaunch.RUNNER));
      files.add(
          script(lib, "/dev/pysandbox/worker/analyzer.py", "analyzer", RunnerLaunch.ANALYZER));
      files.add(
          script(
              lib,
              "/dev/pysandbox/worker/egress_forward.py",
              "egress_forward",
              RunnerLaunch.FORWARDER));
      files.add(
          script(lib, "/dev/pysandbox/backend/docker/container_init.py", "container_init", INIT));
      SandboxFiles.installEtc(lib);
      files.add(bind(lib.resolve("etc/passwd"), "/etc/passwd", true));
      files.add(bind(lib.resolve("etc/group"), "/etc/group", true));
      if (!inspectOnly) {
        Files.createDirectories(doors);
        Files.setPosixFilePermissions(doors, PosixFilePermissions.fromString("rwx--x--x"));
      }
    } catch (IOException | UncheckedIOException e) {
      throw unavailable("cannot prepare " + layout.sandboxRoot() + ": " + e.getMessage());
    }
    Map<Boolean, String> seccomp = new LinkedHashMap<>();
    if (config.seccomp() && !inspectOnly) {
      // Both variants now: a failure says so at set-up, not at some later start.
      boolean inline = DockerSeccomp.takesInlineProfile(version);
      for (boolean network : List.of(false, true)) {
        seccomp.put(network, DockerSeccomp.securityOpt(config.python(), layout, network, inline));
      }
    }
    InterpreterInfo python = probe(engine, image, user, files, seccomp.get(false));
    log.info(
        "docker backend ready: {} at {}, image {} (python {}), runtime {}, sandboxes run as uid {}",
        DockerEngine.describe(version),
        host,
        image,
        python.version(),
        config.dockerRuntime().isEmpty() ? "the engine's default" : config.dockerRuntime(),
        user.uid());
    return new Setup(
        engine, DockerEngine.describe(version), python, user, List.copyOf(files), doors, seccomp);
  }

  /** Installs a runner file in the library directory; its read-only bind at {@code target}. */
  private static Bind script(Path lib, String resource, String stem, String target) {
    return bind(lib.resolve(SandboxFiles.installScript(resource, stem, lib)), target, true);
  }

  private static int currentGid() {
    try {
      Object gid = Files.getAttribute(Path.of("/proc/self"), "unix:gid");
      return gid instanceof Integer i ? i : -1;
    } catch (IOException | UnsupportedOperationException e) {
      return -1;
    }
  }

  /** Runs the interpreter probe in a container of the image, confined like a sandbox. */
  private InterpreterInfo probe(
      DockerEngine engine, String image, HostUser user, List<Bind> files, String seccomp) {
    String id = null;
    try {
      id =
          engine.create(
              image,
              cmd ->
                  cmd.withCmd("python3", "-I", "-c", KERNEL_LINE + InterpreterProbe.script())
                      .withUser(user.uid() + ":" + user.gid())
                      .withEnv(env(RunnerLaunch.environment(null, false)))
                      .withLabels(labels("probe"))
                      .withHostConfig(confined(config.defaultLimits(), files, seccomp)));
      engine.start(id);
      Integer code = engine.await(id, 60);
      String printed = engine.logs(id, 200);
      if (code == null || code != 0) {
        throw unavailable(
            "python3 did not run in image "
                + image
                + (code == null ? " within 60 s" : " (exit " + code + ")")
                + ": "
                + printed.strip());
      }
      checkRuntime(printed);
      return InterpreterProbe.parse(Path.of("/usr/bin/python3"), printed);
    } catch (IOException | RuntimeException e) {
      throw e instanceof PysandboxException p
          ? p
          : unavailable("cannot probe python3 in image " + image + ": " + e.getMessage());
    } finally {
      if (id != null) {
        engine.remove(id);
      }
    }
  }

  /** Printed first by the probe: the kernel the container runs on. */
  private static final String KERNEL_LINE =
      "import sys\nsys.stdout.write('pysandbox-kernel ' + open('/proc/version').read().strip()"
          + " + '\\n')\n";

  /**
   * A runtime asked for by name must be the one that ran the probe: a sandboxing runtime (runsc,
   * kata) runs its own kernel, so a probe that saw the host's kernel ran without it (Podman 4.3's
   * Docker API accepts any registered runtime's name and runs runc). Fails closed.
   */
  private void checkRuntime(String printed) {
    String runtime = config.dockerRuntime();
    if (runtime.isEmpty() || runtime.equals("runc") || runtime.equals("crun")) {
      return;
    }
    String seen =
        printed
            .lines()
            .filter(l -> l.startsWith("pysandbox-kernel "))
            .map(l -> l.substring("pysandbox-kernel ".length()))
            .findFirst()
            .orElse("");
    String host;
    try {
      host = Files.readString(Path.of("/proc/version")).strip();
    } catch (IOException e) {
      host = "";
    }
    if (seen.isEmpty() || seen.equals(host)) {
      throw unavailable(
          "docker_runtime="
              + runtime
              + " was asked for, but the probe container ran on the host's kernel ("
              + (seen.isEmpty() ? "it said nothing" : seen)
              + "): the engine ignored the runtime (Podman 4.3's Docker API does). Use an engine"
              + " that honours it (Docker with "
              + runtime
              + " registered in daemon.json), or leave docker_runtime empty");
    }
  }

  @Override
  public Optional<InterpreterInfo> interpreter() {
    Setup s = setup;
    return s == null ? Optional.empty() : Optional.of(s.python());
  }

  @Override
  public Optional<String> sandboxUsers() {
    Setup s = setup;
    return s == null
        ? Optional.empty()
        : Optional.of(
            "uid "
                + s.user().uid()
                + " in a container of its own each (the same host uid for every container: the"
                + " engine's user namespace, if any, decides)");
  }

  @Override
  public Optional<Map<String, Object>> confinement() {
    Setup s = setup;
    if (s == null) {
      return Optional.empty();
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("engine", s.engineName() + " at " + s.engine().host());
    m.put("image", config.dockerImage() + " (python " + s.python().version() + ")");
    m.put(
        "runtime",
        config.dockerRuntime().isEmpty() ? "the engine's default" : config.dockerRuntime());
    m.put(
        "container",
        "network none, every capability dropped, no-new-privileges, read-only root, tmpfs /tmp,"
            + " memory (swap = memory), pids and CPU limits from the engine");
    m.put(
        "seccomp",
        config.dockerRuntime().equals("runsc")
            ? "gVisor's own kernel is the boundary (runsc does not apply a container's profile)"
            : !config.seccomp()
                ? "the engine's default profile (seccomp=false)"
                : "pysandbox's profile (the bwrap filter's rules as an allow-list)"
                    + (s.seccomp().isEmpty() ? ", made when a server starts" : ""));
    m.put("disk_quota", "measured while a run is in flight (the workspace is a host directory)");
    return Optional.of(m);
  }

  @Override
  public CompletableFuture<Sandbox> start(SandboxSpec spec) {
    if (inspectOnly) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("this docker backend only inspects; it starts no sandbox"));
    }
    Optional<String> reason = unavailableReason();
    if (reason.isPresent()) {
      return CompletableFuture.failedFuture(
          new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, reason.get()));
    }
    if (closed) {
      return CompletableFuture.failedFuture(
          new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, "docker: the backend is closed"));
    }
    Setup s = setup;
    String id = SandboxIds.of(instanceId, counter.incrementAndGet());
    return CompletableFuture.supplyAsync(() -> startNow(s, id, spec), blocking)
        .thenCompose(sandbox -> awaitReady(sandbox, id));
  }

  private DockerSandbox startNow(Setup s, String id, SandboxSpec spec) {
    Path workspace = layout.workspacesDir().resolve(id);
    Path doorDir = s.doors().resolve(id);
    boolean root = HostUser.currentUid() == 0;
    WorkerConnection worker = null;
    WorkerHub.Door door = null;
    SandboxSpec.Egress.Door egress = null;
    String containerId = null;
    DockerSandbox sandbox = null;
    try {
      Files.createDirectory(workspace);
      Files.setPosixFilePermissions(workspace, PosixFilePermissions.fromString("rwx------"));
      if (root) {
        Files.setAttribute(workspace, "unix:uid", s.user().uid(), LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(workspace, "unix:gid", s.user().gid(), LinkOption.NOFOLLOW_LINKS);
      }
      Files.createDirectory(doorDir);
      Files.setPosixFilePermissions(doorDir, PosixFilePermissions.fromString("rwx--x--x"));
      worker = hub.expect(id, spec.outputLimit(), spec.idleOutputMax());
      door = hub.openDoor(worker, doorDir.resolve(DOOR_SOCKET));
      List<Bind> binds = new ArrayList<>(s.files());
      binds.add(bind(workspace, RunnerLaunch.WORKSPACE, false));
      binds.add(bind(doorDir, DOOR_DIR, true));
      for (SandboxSpec.HostMount m : spec.mounts()) {
        binds.add(bind(m.source(), m.target(), true));
      }
      SandboxSpec.Environment env = spec.environment();
      if (env != null) {
        if (env.writable() && root) {
          Files.setAttribute(env.dir(), "unix:uid", s.user().uid(), LinkOption.NOFOLLOW_LINKS);
          Files.setAttribute(env.dir(), "unix:gid", s.user().gid(), LinkOption.NOFOLLOW_LINKS);
        }
        binds.add(bind(env.dir(), SandboxSpec.Environment.TARGET, !env.writable()));
      }
      if (spec.egress() != null) {
        egress = spec.egress().open(id);
        binds.add(bind(egress.socket(), SandboxSpec.Egress.SOCKET, false));
        for (String certs : List.of("/etc/ssl", "/etc/ca-certificates")) {
          if (Files.isDirectory(Path.of(certs))) {
            binds.add(bind(Path.of(certs), certs, true));
          }
        }
      }
      Map<String, String> connect = new LinkedHashMap<>();
      connect.put("socket", DOOR_DIR + "/" + DOOR_SOCKET);
      connect.put("sandbox", id);
      connect.put("token", WorkerHub.token(worker));
      String options =
          RunnerLaunch.options(s.python().sysPath(), spec, spec.egress() != null, connect);
      String python = s.python().realExecutable().toString();
      String life = Json.mapper().writeValueAsString(connect);
      HostConfig host = confined(spec.limits(), binds, s.seccomp().get(spec.egress() != null));
      containerId =
          s.engine()
              .create(
                  config.dockerImage(),
                  cmd ->
                      cmd.withCmd(
                              python,
                              "-I",
                              "-S",
                              INIT,
                              life,
                              python,
                              "-I",
                              "-S",
                              RunnerLaunch.RUNNER,
                              options)
                          .withUser(s.user().uid() + ":" + s.user().gid())
                          .withWorkingDir(RunnerLaunch.WORKSPACE)
                          .withHostName("sandbox")
                          .withEnv(env(RunnerLaunch.environment(env, spec.egress() != null)))
                          .withLabels(labels(id))
                          .withHostConfig(host));
      sandbox =
          new DockerSandbox(
              id, containerId, workspace, worker, s.engine(), blocking, spec.limits(), s.user());
      live.put(id, sandbox);
      WorkerHub.Door openDoor = door;
      SandboxSpec.Egress.Door openEgress = egress;
      sandbox
          .exited()
          .whenComplete(
              (exit, err) -> {
                live.remove(id);
                openDoor.close();
                if (openEgress != null) {
                  openEgress.close();
                }
                deleteQuietly(doorDir);
              });
      s.engine().start(containerId);
      sandbox.started(s.engine().initPid(containerId));
      return sandbox;
    } catch (IOException | RuntimeException e) {
      if (sandbox != null) {
        // Its end closes the doors and removes the container.
        discard(sandbox);
      } else {
        if (containerId != null) {
          s.engine().remove(containerId);
        }
        if (worker != null) {
          worker.close("failed to start");
        }
        if (door != null) {
          door.close();
        }
        if (egress != null) {
          egress.close();
        }
        deleteQuietly(doorDir);
        deleteQuietly(workspace);
      }
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "docker: cannot start sandbox " + id + ": " + e.getMessage(),
          e);
    }
  }

  private CompletableFuture<Sandbox> awaitReady(DockerSandbox sandbox, String id) {
    long timeout = config.startupTimeoutSeconds();
    return sandbox
        .worker()
        .ready()
        .orTimeout(timeout, TimeUnit.SECONDS)
        .handle(
            (ready, err) -> {
              if (err == null) {
                return (Sandbox) sandbox;
              }
              String printed = printedBy(sandbox);
              discard(sandbox);
              String why =
                  err instanceof TimeoutException || err.getCause() instanceof TimeoutException
                      ? "not ready after " + timeout + " s (startup_timeout)"
                      : "its runner stopped before it was ready";
              throw new PysandboxException(
                  ErrorCode.BACKEND_UNAVAILABLE,
                  "docker: sandbox "
                      + id
                      + " "
                      + why
                      + (printed.isEmpty() ? "" : "; it printed: " + printed));
            });
  }

  /** A sandbox that did not start: killed, and its (empty) workspace deleted, in the background. */
  private void discard(DockerSandbox sandbox) {
    sandbox
        .kill("failed to start")
        .whenCompleteAsync((r, e) -> deleteQuietly(sandbox.workspace()), blocking);
  }

  /** What a sandbox that did not start printed: its runner's stderr, else its container's log. */
  private String printedBy(DockerSandbox sandbox) {
    String printed = sandbox.worker().partial().stderr().text().strip();
    if (printed.isEmpty()) {
      Setup s = setup;
      printed = s.engine().logs(sandbox.containerId(), 40).strip();
    }
    return printed.length() > 4000 ? printed.substring(printed.length() - 4000) : printed;
  }

  /** The confinement every container gets, with its limits and binds. */
  private HostConfig confined(Limits limits, List<Bind> binds, String seccomp) {
    List<String> security = new ArrayList<>();
    security.add("no-new-privileges");
    if (seccomp != null) {
      security.add(seccomp);
    }
    HostConfig host =
        HostConfig.newHostConfig()
            .withNetworkMode("none")
            .withCapDrop(Capability.ALL)
            .withSecurityOpts(security)
            .withReadonlyRootfs(true)
            .withTmpFs(Map.of("/tmp", "rw,nosuid,nodev,mode=1777,size=" + limits.tmpBytes()))
            // The engine's default is 64 MiB; one bound for both memory-backed places.
            .withShmSize(limits.tmpBytes())
            .withBinds(binds)
            .withPidsLimit((long) limits.pids() + runtimeThreads())
            .withMemory(limits.memoryBytes())
            .withMemorySwap(limits.memoryBytes())
            .withNanoCPUs(Math.max(10_000_000L, Math.round(limits.cpus() * 1e9)))
            .withUlimits(
                List.of(
                    new Ulimit("nofile", OPEN_FILES, OPEN_FILES),
                    new Ulimit("fsize", limits.diskBytes(), limits.diskBytes()),
                    new Ulimit("core", 0L, 0L),
                    // Every container's user is one host uid: a bound for them all, which the
                    // pids limit keeps each far below. Given because Podman, once any ulimit is,
                    // drops its configured defaults and fails to raise this one to the host's.
                    new Ulimit("nproc", HOST_USER_PROCESSES, HOST_USER_PROCESSES)))
            .withIpcMode("private")
            .withInit(false);
    if (!config.dockerRuntime().isEmpty()) {
      host = host.withRuntime(config.dockerRuntime());
    }
    return host;
  }

  /**
   * Host tasks the runtime itself puts in the container's pids cgroup: gVisor's sentry and gofer
   * (about 42 threads when idle, on this machine kind), which would otherwise leave a sandbox with
   * a small pids limit unable to start. The code's own processes and threads live inside gVisor's
   * kernel, which has no pids limit of its own: on runsc the limit is this much looser.
   */
  private long runtimeThreads() {
    return config.dockerRuntime().equals("runsc") ? RUNSC_THREADS : 0;
  }

  private static Bind bind(Path host, String target, boolean readOnly) {
    return new Bind(host.toString(), new Volume(target), readOnly ? AccessMode.ro : AccessMode.rw);
  }

  private static List<String> env(Map<String, String> vars) {
    return vars.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList();
  }

  private Map<String, String> labels(String sandboxId) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(LABEL_INSTANCE, instanceId == null ? "inspect" : instanceId);
    labels.put(LABEL_SANDBOX, sandboxId);
    labels.put(LABEL_DATA_DIR, layout.identity());
    return labels;
  }

  private static void deleteQuietly(Path dir) {
    try {
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      log.debug("{} stays: {}", dir, e.toString());
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: the containers labelled with this data directory whose server instance is dead.
   */
  @Override
  public int reapOrphans(Predicate<String> instanceAlive) {
    Setup s = setup;
    if (s == null) {
      return 0;
    }
    int removed = 0;
    for (Container c : s.engine().withLabels(Map.of(LABEL_DATA_DIR, layout.identity()))) {
      String instance = c.getLabels() == null ? null : c.getLabels().get(LABEL_INSTANCE);
      if (instance != null && !instanceAlive.test(instance) && !instance.equals(instanceId)) {
        s.engine().remove(c.getId());
        removed++;
      }
    }
    if (removed > 0) {
      HousekeepingLog.LOG.warn("removed {} containers that stopped servers left behind", removed);
    }
    try (var dirs = Files.list(s.doors())) {
      for (Path d : dirs.toList()) {
        String instance = SandboxIds.instanceOf(d.getFileName().toString());
        if (instance != null && !instanceAlive.test(instance)) {
          try (var files = Files.list(d)) {
            for (Path f : files.toList()) {
              Files.deleteIfExists(f);
            }
          }
          Files.deleteIfExists(d);
        }
      }
    } catch (IOException e) {
      log.debug("cleaning {}: {}", s.doors(), e.toString());
    }
    return removed;
  }

  /** Kills and removes every container this backend started, in parallel, waiting a little. */
  @Override
  public void close() {
    closed = true;
    List<CompletableFuture<?>> kills = new ArrayList<>();
    for (DockerSandbox sandbox : List.copyOf(live.values())) {
      kills.add(sandbox.kill("server shutting down"));
    }
    try {
      CompletableFuture.allOf(kills.toArray(CompletableFuture[]::new))
          .get(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (Exception e) {
      log.warn("not every container was removed at shutdown; the next server removes them");
    }
    Setup s = setup;
    if (s != null) {
      s.engine().close();
    }
  }
}

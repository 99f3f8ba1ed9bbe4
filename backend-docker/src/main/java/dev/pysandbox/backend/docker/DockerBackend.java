package dev.pysandbox.backend.docker;

import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import dev.pysandbox.api.Json;
import dev.pysandbox.backend.AbstractSandboxBackend;
import dev.pysandbox.backend.BackendParts;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.RunnerLaunch;
import dev.pysandbox.backend.SandboxIds;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.util.HousekeepingLog;
import dev.pysandbox.worker.WorkerConnection;
import dev.pysandbox.worker.WorkerDoor;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each sandbox is a container of a container engine (Docker, or Podman's compatible service)
 * reached through the Docker Engine API at {@code docker_host}: no network ({@code none}, only
 * loopback), every capability dropped, {@code no-new-privileges}, a read-only root, a size-capped
 * tmpfs {@code /tmp}, the workspace bound at {@code /mnt/data}, an unprivileged user, memory (swap
 * equal to memory), pids and CPU limits, and labels that say whose it is (see {@link
 * ContainerConfig}). A session holds one container; a one-shot run takes one from the warm pool and
 * it is never reused.
 *
 * <p>The runner is not in the image: it is bound read-only at {@code /opt/pysandbox} with its init
 * ({@code container_init.py}), so any image with python3 works. Nothing is inherited across the
 * engine, so the runner connects its three channels itself through a door, a listening socket of
 * the {@link WorkerHub} made for this one sandbox and bound into it (which needs an engine on this
 * host: the workspace is bound from it too).
 *
 * <p>The steps every sandbox goes through are {@link AbstractSandboxBackend}'s; set-up is {@link
 * DockerSetup}; here are the container's own: its door, binds, creation and start.
 */
public final class DockerBackend extends AbstractSandboxBackend<DockerSetup, DockerSandbox> {
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

  private static final long KILL_WAIT_SECONDS = 20;

  private final ContainerConfig containers;

  public DockerBackend(
      PysandboxConfig config,
      DataLayout layout,
      WorkerHub hub,
      String instanceId,
      Executor blocking) {
    this(BackendParts.serving(config, layout, hub, instanceId, blocking));
  }

  private DockerBackend(BackendParts parts) {
    super(parts);
    this.containers = new ContainerConfig(config, layout, instanceId);
  }

  /**
   * A backend for commands that only look: checks the engine and the image and runs the interpreter
   * probe in one short-lived container (as a server's set-up does), but makes no door directory, no
   * seccomp profile and no sandbox.
   */
  public static DockerBackend inspectOnly(PysandboxConfig config, DataLayout layout) {
    return new DockerBackend(BackendParts.inspecting(config, layout));
  }

  @Override
  public String name() {
    return "docker";
  }

  @Override
  protected DockerSetup setUp() {
    return DockerSetup.find(config, layout, containers, inspectOnly);
  }

  @Override
  protected Optional<Map<String, Object>> confinementOf(DockerSetup s) {
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

  /** Engine calls answer over HTTP and may take a while: a start does not hold its caller. */
  @Override
  protected boolean launchesInBackground() {
    return true;
  }

  @Override
  protected Launch<DockerSandbox> begin(
      DockerSetup s, String id, SandboxSpec spec, Path workspace) {
    Path doorDir = s.doors().resolve(id);
    return new Launch<>() {
      private WorkerDoor door;
      private String containerId;

      @Override
      public HostUser user() {
        return s.user();
      }

      @Override
      public DockerSandbox create(WorkerConnection worker, SandboxSpec.Egress.Door egress)
          throws IOException {
        Files.createDirectory(doorDir);
        Files.setPosixFilePermissions(doorDir, PosixFilePermissions.fromString("rwx--x--x"));
        door = hub.openDoor(worker, doorDir.resolve(DOOR_SOCKET));
        List<Bind> binds = new ArrayList<>(s.files());
        binds.add(ContainerConfig.bind(workspace, RunnerLaunch.WORKSPACE, false));
        binds.add(ContainerConfig.bind(doorDir, DOOR_DIR, true));
        for (SandboxSpec.HostMount m : spec.mounts()) {
          binds.add(ContainerConfig.bind(m.source(), m.target(), true));
        }
        SandboxSpec.Environment env = spec.environment();
        if (env != null) {
          binds.add(
              ContainerConfig.bind(env.dir(), SandboxSpec.Environment.TARGET, !env.writable()));
        }
        if (egress != null) {
          binds.add(ContainerConfig.bind(egress.socket(), SandboxSpec.Egress.SOCKET, false));
          for (String certs : List.of("/etc/ssl", "/etc/ca-certificates")) {
            if (Files.isDirectory(Path.of(certs))) {
              binds.add(ContainerConfig.bind(Path.of(certs), certs, true));
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
        HostConfig host =
            containers.confined(spec.limits(), binds, s.seccomp().get(spec.egress() != null));
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
                            .withEnv(
                                ContainerConfig.env(
                                    RunnerLaunch.environment(env, spec.egress() != null)))
                            .withLabels(containers.labels(id))
                            .withHostConfig(host));
        return new DockerSandbox(
            id, containerId, workspace, worker, s.engine(), blocking, spec.limits(), s.user());
      }

      @Override
      public void run(DockerSandbox sandbox) {
        s.engine().start(containerId);
        sandbox.started(s.engine().initPid(containerId));
      }

      @Override
      public void undo() {
        if (containerId != null) {
          s.engine().remove(containerId);
        }
        ended();
      }

      @Override
      public void ended() {
        if (door != null) {
          door.close();
        }
        deleteQuietly(doorDir);
      }
    };
  }

  /** What a sandbox that did not start printed: its runner's stderr, else its container's log. */
  @Override
  protected String printedBy(DockerSandbox sandbox) {
    String printed = super.printedBy(sandbox);
    if (printed.isEmpty()) {
      printed = setup().engine().logs(sandbox.containerId(), 40).strip();
    }
    return printed.length() > 4000 ? printed.substring(printed.length() - 4000) : printed;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: the containers labelled with this data directory whose server instance is dead.
   */
  @Override
  public int reapOrphans(Predicate<String> instanceAlive) {
    DockerSetup s = setup();
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

  /** The labels of every container this server started: its instance, on its data directory. */
  private Map<String, String> ownLabels() {
    return Map.of(LABEL_INSTANCE, instanceId, LABEL_DATA_DIR, layout.identity());
  }

  /**
   * Kills and removes every container this backend started, in parallel, waiting a little; then
   * removes whatever the engine still lists under this server's label (a container whose kill timed
   * out, or whose removal the engine refused while it was still stopping).
   */
  @Override
  public void close() {
    List<CompletableFuture<?>> kills = new ArrayList<>();
    for (DockerSandbox sandbox : stopLaunching(TimeUnit.SECONDS.toMillis(KILL_WAIT_SECONDS))) {
      kills.add(sandbox.kill("server shutting down"));
    }
    try {
      CompletableFuture.allOf(kills.toArray(CompletableFuture[]::new))
          .get(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (Exception e) {
      log.warn("not every container was killed in {} s at shutdown", KILL_WAIT_SECONDS);
    }
    DockerSetup s = setup();
    if (s == null) {
      return;
    }
    try {
      int left = 0;
      if (instanceId != null) {
        // This server's: its instance id on its data directory. Another server on the same engine
        // (another data directory) may carry the same id: its containers are not ours to remove.
        for (Container c : s.engine().withLabels(ownLabels())) {
          if (s.engine().remove(c.getId()) != null) {
            left++;
          }
        }
      }
      if (left > 0) {
        log.warn("{} containers were not removed at shutdown; the next server removes them", left);
      }
    } catch (RuntimeException e) {
      log.warn("cannot list this server's containers at shutdown: {}", e.toString());
    } finally {
      s.engine().close();
    }
  }
}

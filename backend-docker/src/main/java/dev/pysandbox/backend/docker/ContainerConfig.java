package dev.pysandbox.backend.docker;

import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ulimit;
import com.github.dockerjava.api.model.Volume;
import dev.pysandbox.api.Limits;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the engine is told about every container, the set-up's probe and each sandbox alike: its
 * confinement (no network, no capabilities, a read-only root, limits from {@link Limits}), its
 * binds and its labels (whose it is). A value: all of it follows from the three components.
 *
 * @param instanceId this server's instance id, labelled on its containers; null when only
 *     inspecting
 */
record ContainerConfig(PysandboxConfig config, DataLayout layout, String instanceId) {
  /** Open files per process (as bwrap's sandboxes). */
  static final long OPEN_FILES = 1024;

  /** Processes of the one host user all containers run as (RLIMIT_NPROC counts them together). */
  static final long HOST_USER_PROCESSES = 8192;

  /** Room in the pids limit for gVisor's own host threads (see {@link #runtimeThreads}). */
  static final long RUNSC_THREADS = 64;

  /** The confinement every container gets, with its limits and binds. */
  HostConfig confined(Limits limits, List<Bind> binds, String seccomp) {
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

  static Bind bind(Path host, String target, boolean readOnly) {
    return new Bind(host.toString(), new Volume(target), readOnly ? AccessMode.ro : AccessMode.rw);
  }

  static List<String> env(Map<String, String> vars) {
    return vars.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList();
  }

  /** Whose a container is: this server instance ("inspect" when only looking), which sandbox. */
  Map<String, String> labels(String sandboxId) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(DockerBackend.LABEL_INSTANCE, instanceId == null ? "inspect" : instanceId);
    labels.put(DockerBackend.LABEL_SANDBOX, sandboxId);
    labels.put(DockerBackend.LABEL_DATA_DIR, layout.identity());
    return labels;
  }
}

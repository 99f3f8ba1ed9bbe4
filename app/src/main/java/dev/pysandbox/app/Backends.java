package dev.pysandbox.app;

import dev.pysandbox.backend.AutoBackend;
import dev.pysandbox.backend.Candidate;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.bwrap.BwrapBackend;
import dev.pysandbox.backend.docker.DockerBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.worker.WorkerHub;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * Builds the backend that the {@code backend} setting names: {@code bwrap}, or {@code auto}, which
 * tries every kind this build knows in a fixed order (bwrap, then docker) and takes the first that
 * works; when none does, its {@link SandboxBackend#unavailableReason()} lists every attempt and why
 * it failed. The one place that knows which backends exist.
 */
public final class Backends {
  private Backends() {}

  /**
   * The backend a server uses; cheap, it sets nothing up (see {@link
   * SandboxBackend#unavailableReason()}).
   *
   * @param hub where its sandboxes' runners connect
   * @param instanceId this server process's id, which prefixes every sandbox id ({@link
   *     SandboxIds})
   * @param blocking runs the blocking parts of starting and killing
   */
  public static SandboxBackend select(
      PysandboxConfig config,
      DataLayout layout,
      WorkerHub hub,
      String instanceId,
      Executor blocking) {
    Objects.requireNonNull(hub, "hub");
    return choose(
        config,
        new Candidate("bwrap", () -> new BwrapBackend(config, layout, hub, instanceId, blocking)),
        new Candidate(
            "docker", () -> new DockerBackend(config, layout, hub, instanceId, blocking)));
  }

  /**
   * The backend a command that only looks uses ({@code doctor}, {@code runs}, {@code sessions}): it
   * checks what the server's would check, but starts, installs and joins nothing, and starts no
   * sandbox.
   */
  public static SandboxBackend inspect(PysandboxConfig config, DataLayout layout) {
    return choose(
        config,
        new Candidate("bwrap", () -> BwrapBackend.inspectOnly(config, layout)),
        new Candidate("docker", () -> DockerBackend.inspectOnly(config, layout)));
  }

  private static SandboxBackend choose(PysandboxConfig config, Candidate bwrap, Candidate docker) {
    return switch (config.backend()) {
      case "bwrap" -> bwrap.build().get();
      case "docker" -> docker.build().get();
      case "auto" -> new AutoBackend(List.of(bwrap, docker));
      default ->
          throw new IllegalArgumentException(
              "backend=" + config.backend() + ": no such backend (auto, bwrap or docker)");
    };
  }
}

package dev.pysandbox.backend.docker;

import dev.pysandbox.Docker;
import dev.pysandbox.TestEngine;
import dev.pysandbox.backend.EscapeSuite;
import dev.pysandbox.config.DataLayout;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The escape suite on the docker backend (runc), on the real engine of {@link TestEngine}: the same
 * cases and limits as on bwrap; what a sandbox leaves behind is its container, found by this data
 * directory's label.
 */
@Docker
class DockerEscapeIT extends EscapeSuite {
  private DockerEngine engine;

  @Override
  protected Map<String, String> backendSettings() {
    TestEngine e = TestEngine.get();
    engine = new DockerEngine(e.dockerHost(), 4);
    return Map.of("backend", "docker", "docker_host", e.dockerHost(), "docker_image", e.image());
  }

  /**
   * A container has no address-space limit, only its cgroup's: an allocation the kernel's
   * overcommit heuristic refuses is a {@code MemoryError}, one it grants is ended by the cgroup's
   * OOM killer when its pages are touched ({@code MemoryLimitExceeded}); which one depends on the
   * host's free memory. The limit and the kill reason are the same as on bwrap.
   */
  @Override
  protected Set<String> hugeAllocationErrors() {
    return Set.of("MemoryError", "MemoryLimitExceeded");
  }

  /** Podman gives every container {@code TERM=xterm}, {@code container} and {@code HOSTNAME}. */
  @Override
  protected Set<String> variablesOfTheEngine() {
    return Set.of("LC_CTYPE", "TERM", "container", "HOSTNAME");
  }

  @Override
  protected List<String> sandboxesLeft() {
    String identity = new DataLayout(dataDir).identity();
    return engine.withLabels(Map.of(DockerBackend.LABEL_DATA_DIR, identity)).stream()
        .map(c -> c.getLabels().get(DockerBackend.LABEL_SANDBOX) + " " + c.getState())
        .toList();
  }

  @Override
  protected void closeProbes() {
    if (engine != null) {
      engine.close();
    }
  }
}

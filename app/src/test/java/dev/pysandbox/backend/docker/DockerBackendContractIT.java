package dev.pysandbox.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.pysandbox.Docker;
import dev.pysandbox.TestEngine;
import dev.pysandbox.TestServices;
import dev.pysandbox.app.Backends;
import dev.pysandbox.backend.BackendAttempt;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The backend contract on a real container engine: Podman's Docker-compatible service, started for
 * the tests, with the image scripts/build-image.sh makes.
 */
@Docker
class DockerBackendContractIT extends DockerContractBase {

  @Override
  protected Map<String, String> engineSettings() {
    TestEngine engine = TestEngine.get();
    return Map.of("docker_host", engine.dockerHost(), "docker_image", engine.image());
  }

  @Test
  void auto_withoutBwrap_takesDocker_andReportsBothAttempts() {
    TestEngine engine = TestEngine.get();
    PysandboxConfig config =
        TestServices.config(
            dataDir,
            Map.of(
                "backend", "auto",
                "bwrap", dataDir.resolve("no-bwrap").toString(),
                "docker_host", engine.dockerHost(),
                "docker_image", engine.image()));
    try (SandboxBackend b = Backends.inspect(config, new DataLayout(config.dataDir()))) {
      assertThat(b.unavailableReason()).isEmpty();
      assertThat(b.name()).isEqualTo("docker");
      assertThat(b.attempts())
          .extracting(BackendAttempt::name, BackendAttempt::works)
          .containsExactly(tuple("bwrap", false), tuple("docker", true));
      assertThat(b.interpreter())
          .hasValueSatisfying(p -> assertThat(p.packages()).containsKey("numpy"));
      assertThat(b.confinement().orElseThrow().toString()).contains("network none");
    }
  }

  @Test
  void aRuntimeTheEngineDoesNotHonour_failsClosed() {
    TestEngine engine = TestEngine.get();
    PysandboxConfig config =
        TestServices.config(
            dataDir,
            Map.of(
                "backend",
                "docker",
                "docker_host",
                engine.dockerHost(),
                "docker_image",
                engine.image(),
                "docker_runtime",
                "runsc"));
    // Podman 4.3's Docker API runs runc whatever runtime a container names (or refuses one it
    // does not know): either way no sandbox may start believing it has gVisor.
    try (SandboxBackend b = Backends.inspect(config, new DataLayout(config.dataDir()))) {
      assertThat(b.unavailableReason())
          .hasValueSatisfying(why -> assertThat(why).startsWith("docker: ").contains("runsc"));
    }
  }
}

package dev.pysandbox.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.pysandbox.Docker;
import dev.pysandbox.TestEngine;
import dev.pysandbox.TestServices;
import dev.pysandbox.app.Backends;
import dev.pysandbox.backend.BackendAttempt;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

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

  /**
   * Regression (a full run, 2026-11-28): a closing backend removed every container of its instance
   * id on the engine, whatever its data directory, so another server sharing the engine with the
   * same id (here: another contract class in another fork) lost its sandboxes.
   */
  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void close_leavesTheSameInstanceIdOnAnotherDataDirectoryAlone(@TempDir Path otherDir)
      throws Exception {
    Sandbox mine = start();
    Map<String, String> settings = new HashMap<>(engineSettings());
    settings.put("backend", "docker");
    PysandboxConfig otherConfig = TestServices.config(otherDir, settings);
    DataLayout otherLayout = new DataLayout(otherConfig.dataDir());
    try (DockerBackend other =
        new DockerBackend(
            otherConfig, otherLayout, hub(otherLayout, "other-" + INSTANCE), INSTANCE, executor)) {
      Sandbox theirs = start(other, defaultLimits());
      assertThat(result(exec(theirs, "'theirs'"))).isEqualTo("'theirs'");
    }
    assertThat(result(exec(mine, "'mine'"))).isEqualTo("'mine'");
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

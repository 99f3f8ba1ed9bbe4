package dev.pysandbox.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.app.Backends;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Which backend the {@code backend} setting gets, and what it says when none works. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@Sandboxed
class BackendsTest {
  @TempDir Path dataDir;

  private SandboxBackend inspect(Map<String, String> settings) {
    PysandboxConfig config = TestServices.config(dataDir, settings);
    return Backends.inspect(config, new DataLayout(config.dataDir()));
  }

  @Test
  void auto_whenBwrapWorks_isBwrap_andReportsOnlyThatAttempt() {
    try (SandboxBackend b = inspect(Map.of("backend", "auto"))) {
      assertThat(b.unavailableReason()).isEmpty();
      assertThat(b.name()).isEqualTo("bwrap");
      assertThat(b.attempts()).containsExactly(new BackendAttempt("bwrap", null));
      assertThat(b.interpreter()).isPresent();
      assertThat(b.confinement()).isPresent();
    }
  }

  @Test
  void auto_whenNoneWorks_listsEveryAttemptAndWhy() {
    try (SandboxBackend b =
        inspect(
            Map.of(
                "bwrap",
                dataDir.resolve("no-bwrap").toString(),
                "docker_host",
                "unix://" + dataDir.resolve("no-engine.sock")))) {
      assertThat(b.unavailableReason())
          .hasValueSatisfying(
              why ->
                  assertThat(why)
                      .startsWith("no sandbox backend works here: bwrap: ")
                      .contains("apt-get install bubblewrap")
                      .contains(
                          "; docker: no engine at unix://" + dataDir.resolve("no-engine.sock"))
                      .contains("scripts/podman-service.sh"));
      assertThat(b.attempts())
          .extracting(BackendAttempt::name, BackendAttempt::works)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple("bwrap", false),
              org.assertj.core.groups.Tuple.tuple("docker", false));
      assertThat(b.interpreter()).isEmpty();
      assertThat(b.reapOrphans(instance -> false)).isZero();
    }
  }

  @Test
  void bwrapNamed_whenMissing_saysOnlyWhyBwrapFails() {
    try (SandboxBackend b =
        inspect(Map.of("backend", "bwrap", "bwrap", dataDir.resolve("no-bwrap").toString()))) {
      assertThat(b.name()).isEqualTo("bwrap");
      assertThat(b.unavailableReason())
          .hasValueSatisfying(
              why -> assertThat(why).startsWith("bwrap: ").doesNotContain("docker"));
      assertThat(b.attempts()).extracting(BackendAttempt::name).containsExactly("bwrap");
    }
  }

  @Test
  void dockerNamed_withoutAnEngine_saysHowToGetOne_andStartsNothing() {
    try (SandboxBackend b =
        inspect(
            Map.of("backend", "docker", "docker_host", "unix://" + dataDir.resolve("none.sock")))) {
      assertThat(b.name()).isEqualTo("docker");
      assertThat(b.unavailableReason())
          .hasValueSatisfying(
              why ->
                  assertThat(why)
                      .startsWith("docker: no engine at unix://")
                      .contains("DOCKER_HOST")
                      .doesNotContain("bwrap"));
      assertThat(b.attempts()).extracting(BackendAttempt::name).containsExactly("docker");
      assertThat(b.interpreter()).isEmpty();
    }
  }

  @Test
  void dockerHost_mustBeASocketOnThisHost_andTheImageAReference() {
    for (String host : List.of("tcp://10.0.0.1:2375", "unix://relative.sock", "ssh://h")) {
      assertThatThrownBy(() -> TestServices.config(dataDir, Map.of("docker_host", host)))
          .as(host)
          .hasMessageContaining("docker_host")
          .hasMessageContaining("unix:///path/to/socket");
    }
    for (String image : List.of("a b", "-rm", "x;y", "")) {
      assertThatThrownBy(() -> TestServices.config(dataDir, Map.of("docker_image", image)))
          .as(image)
          .hasMessageContaining("docker_image");
    }
    assertThatThrownBy(() -> TestServices.config(dataDir, Map.of("docker_runtime", "../runc")))
        .hasMessageContaining("docker_runtime");
    PysandboxConfig ok =
        TestServices.config(
            dataDir,
            Map.of(
                "backend",
                "docker",
                "docker_host",
                "unix:///run/podman/podman.sock",
                "docker_image",
                "registry.example/team/py:3.11@sha256:" + "a".repeat(64),
                "docker_runtime",
                "runsc"));
    assertThat(ok.dockerHost()).isEqualTo("unix:///run/podman/podman.sock");
    assertThat(ok.dockerRuntime()).isEqualTo("runsc");
  }

  @Test
  void sandboxIds_nameTheirServerInstance() {
    String id = SandboxIds.of("0badc0de", 26);
    assertThat(id).isEqualTo("sbx-0badc0de-1a");
    assertThat(SandboxIds.instanceOf(id)).isEqualTo("0badc0de");
    assertThat(SandboxIds.instanceOf("/x/workspaces/" + id)).isNull();
    assertThat(SandboxIds.instanceOf("probe-0badc0de-1")).isNull();
  }
}

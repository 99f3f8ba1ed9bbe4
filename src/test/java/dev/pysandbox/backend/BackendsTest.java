package dev.pysandbox.backend;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.TestServices;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Which backend the {@code backend} setting gets, and what it says when none works. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
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
    try (SandboxBackend b = inspect(Map.of("bwrap", dataDir.resolve("no-bwrap").toString()))) {
      assertThat(b.unavailableReason())
          .hasValueSatisfying(
              why ->
                  assertThat(why)
                      .startsWith("no sandbox backend works here: bwrap: ")
                      .contains("apt-get install bubblewrap")
                      .endsWith("; docker: not available in this build"));
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
  void sandboxIds_nameTheirServerInstance() {
    String id = SandboxIds.of("0badc0de", 26);
    assertThat(id).isEqualTo("sbx-0badc0de-1a");
    assertThat(SandboxIds.instanceOf(id)).isEqualTo("0badc0de");
    assertThat(SandboxIds.instanceOf("/x/workspaces/" + id)).isNull();
    assertThat(SandboxIds.instanceOf("probe-0badc0de-1")).isNull();
  }
}

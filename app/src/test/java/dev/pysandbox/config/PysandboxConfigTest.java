package dev.pysandbox.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import dev.pysandbox.api.PysandboxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Fast
class PysandboxConfigTest {
  @TempDir Path dir;

  @Test
  void defaults_matchTheDocumentedTable() {
    PysandboxConfig c = PysandboxConfig.load(Map.of("data_dir", dir.toString()), Map.of(), null);
    assertThat(c.timeoutDefaultSeconds()).isEqualTo(60);
    assertThat(c.timeoutMaxSeconds()).isEqualTo(3600);
    assertThat(c.outputLimitBytes()).isEqualTo(1 << 20);
    assertThat(c.codeMaxBytes()).isEqualTo(100_000);
    assertThat(c.python()).isEqualTo(Path.of("/usr/bin/python3"));
    assertThat(c.poolSize()).isEqualTo(2);
    assertThat(c.readMaxBytes()).isEqualTo(16 << 20);
    assertThat(c.describe().get("timeout_default").source()).isEqualTo("default");
  }

  @Test
  void precedence_flagOverEnvironmentOverFileOverDefault() throws Exception {
    Files.writeString(
        dir.resolve("config.properties"), "timeout_default=10\npool_size=3\noutput_limit=4096\n");
    PysandboxConfig c =
        PysandboxConfig.load(
            Map.of("data_dir", dir.toString(), "timeout_default", "30"),
            Map.of("PYSANDBOX_TIMEOUT_DEFAULT", "20", "PYSANDBOX_POOL_SIZE", "4"),
            null);
    assertThat(c.timeoutDefaultSeconds()).isEqualTo(30);
    assertThat(c.poolSize()).isEqualTo(4);
    assertThat(c.outputLimitBytes()).isEqualTo(4096);
    assertThat(c.describe().get("pool_size").source()).isEqualTo("env PYSANDBOX_POOL_SIZE");
    assertThat(c.describe().get("output_limit").source()).startsWith("file ");
  }

  @Test
  void dataDir_fromEnvironment_locatesTheConfigFile() throws Exception {
    Files.writeString(dir.resolve("config.properties"), "timeout_max=100\n");
    PysandboxConfig c =
        PysandboxConfig.load(Map.of(), Map.of("PYSANDBOX_DATA_DIR", dir.toString()), null);
    assertThat(c.dataDir()).isEqualTo(dir);
    assertThat(c.timeoutMaxSeconds()).isEqualTo(100);
  }

  @Test
  void impossibleValues_areRejectedNamingTheSetting() {
    assertThatThrownBy(() -> load("timeout_max", "0"))
        .hasMessageContaining("timeout_max")
        .hasMessageContaining("between");
    assertThatThrownBy(() -> load("pool_size", "two"))
        .hasMessageContaining("pool_size")
        .hasMessageContaining("whole number");
    assertThatThrownBy(() -> load("python", "python3")).hasMessageContaining("absolute");
    assertThatThrownBy(() -> load("sandbox_user", "root")).hasMessageContaining("must not be root");
    assertThatThrownBy(() -> load("pool_preload", "numpy,os;rm"))
        .hasMessageContaining("not a module name");
    assertThatThrownBy(() -> load("read_max_bytes", "0")).hasMessageContaining("read_max_bytes");
    assertThatThrownBy(() -> load("read_max_bytes", String.valueOf((256 << 20) + 1)))
        .hasMessageContaining("read_max_bytes");
    assertThatThrownBy(() -> load("no_such_key", "1"))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("unknown setting 'no_such_key'");
  }

  @Test
  void toolsEnabled_namesToolsAndGroups_everyToolWhenUnset_andAnUnknownNameIsAnErrorNamingIt() {
    assertThat(load("tools_enabled", "run, info,list_runs").toolsEnabled())
        .containsExactly(
            "run_python", "validate_code", "cancel_run", "rerun", "check_setup", "list_runs");
    assertThat(
            PysandboxConfig.load(Map.of("data_dir", dir.toString()), Map.of(), null).toolsEnabled())
        .hasSize(dev.pysandbox.api.op.Operations.ALL.size() + 2)
        .contains("run_python", "approve_run", "clean_environments");
    assertThatThrownBy(() -> load("tools_enabled", "run,run_pyton,sesion"))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("tools_enabled")
        .hasMessageContaining("'run_pyton', 'sesion' are neither a tool nor a group")
        .hasMessageContaining(
            "groups: run, approval, session, files, history, env, info, safety, agent");
  }

  @Test
  void riskyValues_areClampedWithAWarning() {
    PysandboxConfig c =
        PysandboxConfig.load(
            Map.of("data_dir", dir.toString(), "timeout_default", "900", "timeout_max", "600"),
            Map.of(),
            null);
    assertThat(c.timeoutDefaultSeconds()).isEqualTo(600);
    assertThat(c.warnings()).singleElement().asString().contains("timeout_default");
  }

  @Test
  void sandboxLimits_comeFromEveryLayer_andDefaultsAboveTheMaximaAreClamped() {
    PysandboxConfig d = PysandboxConfig.load(Map.of("data_dir", dir.toString()), Map.of(), null);
    assertThat(d.defaultLimits().describe())
        .containsEntry("memory_limit_mb", 512L)
        .containsEntry("pids_limit", 128)
        .containsEntry("cpu_limit", 1.0)
        .containsEntry("disk_quota_mb", 1024L)
        .containsEntry("tmp_size_mb", 256L);
    assertThat(d.outputMaxBytes()).isEqualTo(64L << 20);
    assertThat(d.seccomp()).isTrue();
    assertThat(d.cgroups()).isTrue();
    PysandboxConfig c =
        PysandboxConfig.load(
            Map.of("data_dir", dir.toString(), "memory_limit_mb", "8192", "cpu_limit", "0.5"),
            Map.of("PYSANDBOX_PIDS_LIMIT", "64", "PYSANDBOX_DISK_QUOTA_MAX_MB", "100"),
            null);
    assertThat(c.defaultLimits().memoryBytes()).isEqualTo(4096L << 20);
    assertThat(c.defaultLimits().pids()).isEqualTo(64);
    assertThat(c.defaultLimits().cpus()).isEqualTo(0.5);
    assertThat(c.defaultLimits().diskBytes()).isEqualTo(100L << 20);
    assertThat(c.warnings())
        .anySatisfy(w -> assertThat(w).contains("memory_limit_mb"))
        .anySatisfy(w -> assertThat(w).contains("disk_quota_mb"));
    assertThatThrownBy(() -> load("pids_limit", "0")).hasMessageContaining("pids_limit");
    assertThatThrownBy(() -> load("cpu_limit", "many")).hasMessageContaining("cpu_limit");
  }

  @Test
  void sandboxUidRange_defaultsToAHighRange_offTurnsItOff_andUnsafeRangesAreRejected() {
    PysandboxConfig c = PysandboxConfig.load(Map.of("data_dir", dir.toString()), Map.of(), null);
    assertThat(c.sandboxUidRange()).contains(new UidRange(2_000_000_000, 2_000_065_535));
    assertThat(c.diskQuotaFs()).isTrue();
    assertThat(load("sandbox_uid_range", "off").sandboxUidRange()).isEmpty();
    assertThat(load("sandbox_uid_range", "").sandboxUidRange()).isEmpty();
    assertThat(load("sandbox_uid_range", "300000-300099").sandboxUidRange())
        .contains(new UidRange(300_000, 300_099));
    for (String bad :
        new String[] {
          "0-100", "500-70000", "60000-70000", "20-10", "1000", "a-b", "3000000000-3000000005"
        }) {
      assertThatThrownBy(() -> load("sandbox_uid_range", bad))
          .as(bad)
          .isInstanceOf(PysandboxException.class)
          .hasMessageContaining("sandbox_uid_range");
    }
    assertThatThrownBy(() -> load("sandbox_uid_range", "0-100")).hasMessageContaining("root");
    assertThatThrownBy(() -> load("sandbox_uid_range", "60000-70000"))
        .hasMessageContaining("65534");
    assertThat(load("sandbox_uid_range", "300000-300003").warnings())
        .anySatisfy(w -> assertThat(w).contains("sandbox_uid_range").contains("4 uids"));
  }

  @Test
  void diskQuotaFs_isAutoOrOff() {
    assertThat(load("disk_quota_fs", "off").diskQuotaFs()).isFalse();
    assertThatThrownBy(() -> load("disk_quota_fs", "yes")).hasMessageContaining("disk_quota_fs");
  }

  private PysandboxConfig load(String key, String value) {
    return PysandboxConfig.load(Map.of("data_dir", dir.toString(), key, value), Map.of(), null);
  }
}

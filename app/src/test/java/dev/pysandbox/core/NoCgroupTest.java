package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host that gives no cgroup (here: {@code cgroups=false}): check_setup says so, and the rlimits
 * still bound memory and file size.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class NoCgroupTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;

  @BeforeAll
  static void start() {
    service =
        TestServices.start(
            dataDir, Map.of("cgroups", "false", "pool_size", "1", "memory_limit_mb", "256"));
  }

  @AfterAll
  static void stop() {
    service.close();
  }

  @Test
  void checkSetup_saysThereIsNoCgroup() {
    var report = service.checkSetup();
    assertThat(report.limits().get("confinement").toString())
        .contains("cgroups=none: turned off (cgroups=false)")
        .contains("seccomp=on");
    assertThat(report.problems())
        .anySatisfy(p -> assertThat(p).startsWith("no cgroup per sandbox").contains("rlimits"));
  }

  @Test
  void rlimits_stillStopAGrowingList_andABigFile() {
    RunRecord r =
        service.run(
            new ExecutionRequest(
                "x = []\nwhile True:\n    x.append(b'1' * 10**6)", null, null, 30));
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.FAILED);
    assertThat(r.killReason()).as("%s", r.error()).isEqualTo(KillReason.MEMORY_LIMIT);
    assertThat(r.error().name()).isEqualTo("MemoryError");
    assertThat(r.peakMemoryBytes()).as("nothing measures it without a cgroup").isNull();
    RunRecord file =
        service.run(
            new ExecutionRequest(
                "with open('/mnt/data/big', 'wb') as f:\n    f.seek(2 * 1024**3)\n    f.write(b'x')",
                null,
                null,
                30));
    assertThat(file.killReason()).as(file.message()).isEqualTo(KillReason.DISK_QUOTA);
    assertThat(file.message()).contains("File too large");
  }
}

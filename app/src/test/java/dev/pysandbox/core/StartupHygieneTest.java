package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.bwrap.BwrapBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.jdbc.JdbcRunStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What a server finds at start-up after another one died: runs, sandboxes, workspaces. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class StartupHygieneTest {
  @TempDir Path dataDir;

  @Test
  void start_afterADeadServer_interruptsItsRuns_killsItsSandboxes_removesItsWorkspaces()
      throws Exception {
    DataLayout layout = new DataLayout(dataDir);
    try (RunStore store = JdbcRunStore.openSqlite(layout.database())) {
      store.insert(
          RunRecord.builder()
              .runId("run_left_running")
              .status(RunStatus.RUNNING)
              .code("import time; time.sleep(600)")
              .codeHash("c".repeat(64))
              .timeoutSeconds(600)
              .createdAt(Instant.now().toString())
              .build(),
          "deadbeef");
    }
    Path deadWorkspace = layout.workspacesDir().resolve("sbx-deadbeef-7");
    Files.createDirectories(deadWorkspace);
    Files.writeString(deadWorkspace.resolve("left.txt"), "x");
    Path visible = BwrapBackend.visibleSandboxRoot(layout, HostUser.currentUid() == 0);
    Process orphan =
        new ProcessBuilder(
                "/usr/bin/python3",
                "-c",
                "import time; time.sleep(600)",
                "--bind",
                visible.resolve("workspaces/sbx-deadbeef-7").toString(),
                "/mnt/data")
            .start();
    try (DefaultSandboxService service = TestServices.start(dataDir, Map.of("pool_size", "0"))) {
      RunRecord r = service.getRun("run_left_running", false);
      assertThat(r.status()).isEqualTo(RunStatus.INTERRUPTED);
      assertThat(r.message()).contains("deadbeef");
      assertThat(orphan.waitFor(5, TimeUnit.SECONDS)).as("the orphan sandbox was killed").isTrue();
      assertThat(deadWorkspace).doesNotExist();
    } finally {
      orphan.destroyForcibly();
    }
  }
}

package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.TestServices;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.jdbc.JdbcRunStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a server in the middle of a run: nothing of the sandbox survives, the run is
 * interrupted.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class KillRecoveryIT {
  @TempDir Path dataDir;

  @Test
  void killedServer_leavesNoSandbox_andItsRunBecomesInterrupted() throws Exception {
    String marker = "pysandbox-marker-" + UUID.randomUUID();
    Process server =
        new ProcessBuilder(
                TestServices.launcher().toString(), "serve", "--data-dir", dataDir.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    String code =
        "import subprocess, time\\nsubprocess.Popen(['sh', '-c', 'sleep 600; echo "
            + marker
            + "'], start_new_session=True)\\ntime.sleep(600)";
    String requests =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n"
            + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
            + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\",\"arguments\":{\"code\":\""
            + code
            + "\"}}}\n";
    server.getOutputStream().write(requests.getBytes(StandardCharsets.UTF_8));
    server.getOutputStream().flush();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (ProcessTable.withCommandLineContaining(marker).isEmpty()) {
        assertThat(System.nanoTime()).as("the run started").isLessThan(deadline);
        Thread.sleep(100);
      }
      server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      long gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (!ProcessTable.withCommandLineContaining(marker).isEmpty()
          && System.nanoTime() < gone) {
        Thread.sleep(50);
      }
      assertThat(ProcessTable.withCommandLineContaining(marker))
          .as("no process of the sandbox outlives its server")
          .isEmpty();
    } finally {
      server.destroyForcibly();
    }
    try (RunStore store = JdbcRunStore.openSqlite(dataDir.resolve("pysandbox.db"))) {
      assertThat(store.list(new RunQuery(10, 0, RunStatus.RUNNING, null)).total()).isEqualTo(1);
    }
    try (DefaultSandboxService service = TestServices.start(dataDir, Map.of("pool_size", "0"))) {
      var runs = service.listRuns(new RunQuery(10, 0, null, null)).runs();
      assertThat(runs).hasSize(1);
      RunRecord r = service.getRun(runs.get(0).runId(), false);
      assertThat(r.status()).isEqualTo(RunStatus.INTERRUPTED);
      assertThat(r.message()).contains("stopped before the run finished");
    }
  }
}

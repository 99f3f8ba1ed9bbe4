package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.jdbc.JdbcRunStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a server in the middle of a run: nothing of the sandbox survives, the run is
 * interrupted, the next server removes the dead one's cgroups, and what the run had printed (in its
 * event spill only, before: issue 24 item 12) is in the interrupted run's record.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Client
class KillRecoveryIT {
  @TempDir Path dataDir;

  @Test
  void killedServer_leavesNoSandbox_andItsRunBecomesInterrupted() throws Exception {
    String marker = "pysandbox-marker-" + UUID.randomUUID();
    Set<Path> groupsBefore = serverCgroups(dataDir);
    Path deadServersGroup;
    Process server =
        new ProcessBuilder(
                TestServices.launcher().toString(), "serve", "--data-dir", dataDir.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    String code =
        "import subprocess, time\\nprint('printed-"
            + marker
            + "', flush=True)\\nsubprocess.Popen(['sh', '-c', 'sleep 600; echo "
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
      Await.until(
          "the run started",
          Duration.ofSeconds(30),
          () -> ProcessTable.withCommandLineContaining(marker),
          pids -> !pids.isEmpty());
      Await.untilChecked("the run's output was spilled", () -> spilled(marker), s -> s);
      Set<Path> mine = new HashSet<>(serverCgroups(dataDir));
      mine.removeAll(groupsBefore);
      assertThat(mine).as("the server made its cgroup parent").hasSize(1);
      deadServersGroup = mine.iterator().next();
      try (Stream<Path> groups = Files.list(deadServersGroup)) {
        assertThat(groups.filter(Files::isDirectory))
            .as("with a group for the running sandbox")
            .isNotEmpty();
      }
      server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      Await.until(
          "no process of the sandbox outlives its server",
          () -> ProcessTable.withCommandLineContaining(marker),
          List::isEmpty);
    } finally {
      server.destroyForcibly();
    }
    try (RunStore store = JdbcRunStore.openSqlite(dataDir.resolve("pysandbox.db"))) {
      assertThat(store.list("local", new RunQuery(10, 0, RunStatus.RUNNING, null)).total())
          .isEqualTo(1);
    }
    try (DefaultSandboxService service = TestServices.start(dataDir, Map.of("pool_size", "0"))) {
      var runs = service.listRuns(new RunQuery(10, 0, null, null)).runs();
      assertThat(runs).hasSize(1);
      RunRecord r = service.getRun(runs.get(0).runId(), false);
      assertThat(r.status()).isEqualTo(RunStatus.INTERRUPTED);
      assertThat(r.message())
          .contains("stopped before the run finished")
          .contains("recovered from its event spill");
      assertThat(r.stdout()).isEqualTo("printed-" + marker + "\n");
      assertThat(deadServersGroup)
          .as("the next server removed the dead server's cgroups")
          .doesNotExist();
    }
  }

  /** Whether a run's event spill ({@code runs/<id>/events.ndjson}) holds {@code text}. */
  private boolean spilled(String text) throws IOException {
    Path runs = dataDir.resolve("runs");
    if (!Files.isDirectory(runs)) {
      return false;
    }
    try (Stream<Path> s = Files.list(runs)) {
      for (Path run : s.toList()) {
        Path spill = run.resolve("events.ndjson");
        if (Files.isRegularFile(spill) && Files.readString(spill).contains(text)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * This data directory's per-server groups in the memory hierarchy (other test forks run servers
   * of their own meanwhile).
   */
  private static Set<Path> serverCgroups(Path dataDir) throws IOException {
    String scope = "pysandbox-" + new dev.pysandbox.config.DataLayout(dataDir).identity() + "-";
    Path own = null;
    for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
      String[] f = line.split(":", 3);
      if (List.of(f[1].split(",")).contains("memory")) {
        own = Path.of("/sys/fs/cgroup/memory", f[2].substring(1));
      }
    }
    assertThat(own).as("a cgroup v1 memory hierarchy (this kind of host)").isNotNull();
    try (Stream<Path> s = Files.list(own)) {
      return s.filter(p -> p.getFileName().toString().startsWith(scope))
          .collect(Collectors.toCollection(HashSet::new));
    }
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A graceful stop: runs that finish within the grace period succeed, the rest end cancelled. */
@Sandboxed
class DrainTest {
  @TempDir Path dataDir;

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void drain_letsShortRunsFinish_cancelsLongOnesWithTheReason_refusesNewOnes() throws Exception {
    DefaultSandboxService core = TestServices.start(dataDir, Map.of("pool_size", "2"));
    try {
      var alice = core.forTenant("alice");
      CompletableFuture<RunRecord> shortRun =
          CompletableFuture.supplyAsync(
              () -> core.run(ExecutionRequest.of("import time; time.sleep(1); print('done')")));
      CompletableFuture<RunRecord> longRun =
          CompletableFuture.supplyAsync(
              () ->
                  alice.run(new ExecutionRequest("import time; time.sleep(60)", "s1", null, 120)));
      Await.until(
          "both runs running",
          () ->
              core.listRuns(new RunQuery(10, 0, RunStatus.RUNNING, null)).runs().size()
                  + alice.listRuns(new RunQuery(10, 0, RunStatus.RUNNING, null)).runs().size(),
          running -> running == 2);
      List<String> cancelled = core.drain(3_000, "the server is stopping (SIGTERM; grace 3 s)");

      RunRecord done = shortRun.get(10, TimeUnit.SECONDS);
      assertThat(done.status()).as(done.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(done.stdout()).isEqualTo("done\n");
      RunRecord cut = longRun.get(10, TimeUnit.SECONDS);
      assertThat(cancelled).containsExactly(cut.runId());
      assertThat(cut.status()).isEqualTo(RunStatus.CANCELLED);
      assertThat(cut.message()).contains("the server is stopping (SIGTERM; grace 3 s)");
      // Waited out the grace period, not the run (60 s): the run was cut, not let finish.
      assertThat(alice.getRun(cut.runId(), false).status()).isEqualTo(RunStatus.CANCELLED);

      assertThatThrownBy(() -> core.run(ExecutionRequest.of("print(1)")))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BACKEND_UNAVAILABLE);
                assertThat(e.code().retryable()).isTrue();
              });
    } finally {
      core.close();
    }
  }
}

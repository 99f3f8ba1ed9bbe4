package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
      for (int i = 0; i < 250; i++) {
        int running =
            core.listRuns(new RunQuery(10, 0, RunStatus.RUNNING, null)).runs().size()
                + alice.listRuns(new RunQuery(10, 0, RunStatus.RUNNING, null)).runs().size();
        if (running == 2) {
          break;
        }
        Thread.sleep(20);
      }
      long t0 = System.nanoTime();
      List<String> cancelled = core.drain(3_000, "the server is stopping (SIGTERM; grace 3 s)");
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

      RunRecord done = shortRun.get(10, TimeUnit.SECONDS);
      assertThat(done.status()).as(done.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(done.stdout()).isEqualTo("done\n");
      RunRecord cut = longRun.get(10, TimeUnit.SECONDS);
      assertThat(cancelled).containsExactly(cut.runId());
      assertThat(cut.status()).isEqualTo(RunStatus.CANCELLED);
      assertThat(cut.message()).contains("the server is stopping (SIGTERM; grace 3 s)");
      assertThat(alice.getRun(cut.runId(), false).status()).isEqualTo(RunStatus.CANCELLED);
      assertThat(tookMs).as("waited out the grace period, not the run").isLessThan(9_000);

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

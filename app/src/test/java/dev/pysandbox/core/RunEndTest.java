package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 item 7: what follows a run's code (the snapshot, hashing, copies) is bounded. 50 sparse
 * files of 1 GiB each (nothing on disk) once kept a run {@code running} for 24 minutes, hashing 50
 * GiB of zeros, and {@code cancel_run} answered {@code internal}; now the bytes hashed and the time
 * are budgeted, what is past them is listed with the reason, and a cancel ends the collection.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class RunEndTest {
  @TempDir Path dataDir;

  /** 50 files of 1 GiB apparent size, nothing written (all hole). */
  private static final String SPARSE =
      "for i in range(50):\n"
          + "    with open(f'sparse{i:02}.bin', 'wb') as f:\n"
          + "        f.truncate(1 << 30)\n"
          + "with open('small.txt', 'w') as f:\n"
          + "    f.write('kept')\n"
          + "print('written', flush=True)\n";

  @Test
  void sparseFiles_pastTheHashBudget_areListedNotKept_andTheRunEnds() {
    try (DefaultSandboxService service =
        TestServices.start(dataDir, Map.of("pool_size", "0", "collect_hash_max_mb", "64"))) {
      RunRecord r = service.run(new ExecutionRequest(SPARSE, "sparse", null, 10));
      assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
      List<Artifact> sparse = sparse(r);
      assertThat(sparse).hasSize(50);
      assertThat(sparse)
          .allSatisfy(a -> assertThat(a.skipped()).contains("collect_hash_max_mb").contains("64"));
      assertThat(r.message()).contains("50 files were not hashed or kept");
      Artifact small = artifact(r, "small.txt");
      assertThat(small.skipped()).isNull();
      assertThat(small.sha256()).isNotNull();

      assertThat(service.listArtifacts(null, "sparse").files())
          .as("list_artifacts hashes within the same budget: the sparse files are not listed")
          .extracting(dev.pysandbox.api.FileInfo::path)
          .containsExactly("small.txt");

      RunRecord next = service.run(new ExecutionRequest("print(1)", "sparse", null, 10));
      assertThat(next.artifacts())
          .as("files left unhashed but unchanged are not reported again")
          .isEmpty();

      RunRecord oneShot = service.run(new ExecutionRequest(SPARSE, null, null, 10));
      assertThat(sparse(oneShot))
          .hasSize(50)
          .allSatisfy(a -> assertThat(a.skipped()).contains("collect_hash_max_mb"));
      assertThat(artifact(oneShot, "small.txt").skipped()).isNull();
    }
  }

  @Test
  void sparseFiles_pastTheTimeBudget_areListedNotKept() {
    try (DefaultSandboxService service =
        TestServices.start(
            dataDir,
            Map.of(
                "pool_size", "0", "collect_hash_max_mb", "16777216", "collect_max_seconds", "1"))) {
      RunRecord r = service.run(new ExecutionRequest(SPARSE, "slow", null, 10));
      assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(sparse(r))
          .hasSize(50)
          .anySatisfy(a -> assertThat(a.skipped()).contains("collect_max_seconds"));
    }
  }

  @Test
  void cancel_whileTheFilesAreCollected_endsTheRunCancelled() throws Exception {
    ExecutorService threads = Executors.newSingleThreadExecutor();
    try (DefaultSandboxService service =
        TestServices.start(
            dataDir,
            Map.of(
                "pool_size",
                "0",
                "collect_hash_max_mb",
                "16777216",
                "collect_max_seconds",
                "3600"))) {
      CountDownLatch written = new CountDownLatch(1);
      AtomicReference<String> runId = new AtomicReference<>();
      RunListener listener =
          new RunListener() {
            @Override
            public void started(String id) {
              runId.set(id);
            }

            @Override
            public boolean wantsEvents() {
              return true;
            }

            @Override
            public void event(RunEvent e) {
              if (e instanceof RunEvent.Stdout s && s.text().contains("written")) {
                written.countDown();
              }
            }
          };
      CompletableFuture<RunRecord> run =
          CompletableFuture.supplyAsync(
              () -> service.run(new ExecutionRequest(SPARSE, "cancelled", null, 10), listener),
              threads);
      assertThat(written.await(60, TimeUnit.SECONDS)).as("the code wrote its files").isTrue();
      CancelResult c = service.cancelRun(runId.get());
      assertThat(c.status()).isEqualTo(RunStatus.CANCELLED);
      RunRecord r = run.get(60, TimeUnit.SECONDS);
      assertThat(r.status()).isEqualTo(RunStatus.CANCELLED);
      assertThat(sparse(r))
          .anySatisfy(
              a -> assertThat(a.skipped()).contains("cancelled while its files were collected"));
      // (Removed first: left unhashed, each would be hashed again by the next run's collection.)
      String removeAndPrint =
          "import glob, os\nfor p in glob.glob('sparse*'):\n    os.remove(p)\nprint(2)";
      assertThat(service.run(new ExecutionRequest(removeAndPrint, "cancelled", null, 10)).stdout())
          .as("the session lives on")
          .isEqualTo("2\n");
    } finally {
      threads.shutdownNow();
    }
  }

  private static List<Artifact> sparse(RunRecord r) {
    return r.artifacts().stream().filter(a -> a.path().startsWith("sparse")).toList();
  }

  private static Artifact artifact(RunRecord r, String path) {
    return r.artifacts().stream().filter(a -> a.path().equals(path)).findFirst().orElseThrow();
  }
}

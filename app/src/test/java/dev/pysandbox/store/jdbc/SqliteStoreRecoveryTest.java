package dev.pysandbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.store.RunStoreContractAccess;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression: after one failed write (the file system holding the database was full) every later
 * write failed with "statement is not executing" until a restart, because the failed prepared
 * statement stayed in the cache. A full disk is {@code disk_full}, naming the file system (issue
 * 23). The database lives on a small tmpfs that the test fills.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class SqliteStoreRecoveryTest {
  @TempDir Path dir;
  private Path mount;
  private boolean mounted;
  private JdbcRunStore store;

  @BeforeEach
  void mountSmallTmpfs() throws Exception {
    mount = Files.createDirectories(dir.resolve("fs"));
    mounted = run("mount", "-t", "tmpfs", "-o", "size=2m", "pysandbox-test", mount.toString());
    // Never skipped: the test command runs as root (CI does); a host that cannot mount fails
    // loudly.
    assertThat(mounted).as("mount a 2 MiB tmpfs (the test needs root)").isTrue();
  }

  @AfterEach
  void unmount() throws Exception {
    if (store != null) {
      store.close();
    }
    if (mounted && !run("umount", mount.toString())) {
      run("umount", "-l", mount.toString());
    }
  }

  @Test
  void writes_afterTheFileSystemWasFull_succeedOnceSpaceReturns_withoutReopening()
      throws Exception {
    store = JdbcRunStore.openSqlite(mount.resolve("pysandbox.db"));
    store.insert(RunStoreContractAccess.running("run_before"), "aaaaaaaa");
    Path filler = mount.resolve("filler");
    fill(filler);

    // disk_full (retryable), naming the file system: what is full, and what to free.
    assertThatExceptionOfType(PysandboxException.class)
        .isThrownBy(() -> store.insert(bigRunning("run_full"), "aaaaaaaa"))
        .satisfies(e -> assertThat(e.code()).isEqualTo(ErrorCode.DISK_FULL))
        .satisfies(e -> assertThat(e.retryable()).isTrue())
        .withMessageContaining("the file system " + mount)
        .withMessageContaining("free space and try again");
    assertThatExceptionOfType(PysandboxException.class)
        .isThrownBy(() -> store.finish(finished("run_before")))
        .extracting(PysandboxException::code)
        .isEqualTo(ErrorCode.DISK_FULL);

    Files.delete(filler);
    store.insert(bigRunning("run_after"), "aaaaaaaa");
    assertThat(store.finish(finished("run_before"))).isTrue();
    assertThat(store.get("run_before", false).orElseThrow().status())
        .isEqualTo(RunStatus.SUCCEEDED);
    assertThat(store.get("run_after", true).orElseThrow().code()).hasSize(200_000);
    assertThat(store.get("run_full", false)).isEmpty();
    assertThat(store.list("local", new RunQuery(10, 0, null, null)).total()).isEqualTo(2);
  }

  private static RunRecord bigRunning(String id) {
    // Larger than any free space a WAL file might have left over, so the write needs new blocks.
    return RunStoreContractAccess.running(id).toBuilder().code("#".repeat(200_000)).build();
  }

  private static RunRecord finished(String id) {
    return RunStoreContractAccess.running(id).toBuilder()
        .status(RunStatus.SUCCEEDED)
        .stdout("x".repeat(200_000))
        .stdoutBytes(200_000)
        .exitCode(0)
        .finishedAt(Instant.ofEpochMilli(2000).toString())
        .durationMs(1000L)
        .build();
  }

  /** Writes zeros until the file system has no block left. */
  private static void fill(Path file) throws IOException {
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      for (int chunk : new int[] {1 << 16, 1 << 12, 1}) {
        ByteBuffer zeros = ByteBuffer.allocate(chunk);
        try {
          while (true) {
            zeros.clear();
            while (zeros.hasRemaining()) {
              ch.write(zeros);
            }
          }
        } catch (IOException full) {
          // no space for this chunk size; try a smaller one
        }
      }
    }
  }

  private static boolean run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
  }
}

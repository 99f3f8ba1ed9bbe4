package dev.pysandbox.core.trajectories;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.ManualTime;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.CallRecord.Face;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A FIFO planted where a session's trajectory file goes does not hold the writer: apart from {@link
 * TrajectoryLogTest} because the JDK cannot make a FIFO, so the host's {@code mkfifo} runs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class TrajectoryFifoTest {
  @TempDir Path dataDir;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private TrajectoryLog log;

  @AfterEach
  void stop() {
    if (log != null) {
      log.close();
    }
    timer.shutdownNow();
  }

  @Test
  void aFifoPlantedAtTheFile_doesNotHoldTheWriter() throws Exception {
    Path sessions = Files.createDirectories(dataDir.resolve("trajectories/local/sessions"));
    Process mkfifo =
        new ProcessBuilder("mkfifo", sessions.resolve("s1.jsonl").toString()).inheritIO().start();
    assertThat(mkfifo.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(mkfifo.exitValue()).isZero();
    DataLayout layout = new DataLayout(dataDir);
    log = new TrajectoryLog(layout, ManualTime.frozen(Instant.parse("2026-11-25T15:01:02Z")), true);
    log.start(timer, Runnable::run, 0);
    log.record("local", getRun("s1"));
    log.record("local", getRun("s2"));
    Path s2 = layout.sessionTrajectory("local", "s2");
    Await.until("a line in " + s2, () -> lineCount(s2), n -> n >= 1);
    assertThat(lineCount(s2)).isEqualTo(1);
    assertThat(log.lost()).isEqualTo(1);
  }

  private static CallRecord getRun(String session) {
    return CallRecord.answered(Face.REST, "get_run", Map.of("session_id", session), null, null, 0);
  }

  private static int lineCount(Path file) {
    try {
      return Files.exists(file) ? Files.readAllLines(file).size() : 0;
    } catch (IOException e) {
      return 0;
    }
  }
}

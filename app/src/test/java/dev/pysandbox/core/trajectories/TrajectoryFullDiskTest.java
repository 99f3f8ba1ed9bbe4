package dev.pysandbox.core.trajectories;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.LoopFileSystem;
import dev.pysandbox.ManualTime;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.CallRecord.Face;
import dev.pysandbox.api.Json;
import dev.pysandbox.config.DataLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression (issue 23): a trajectory line that a full disk cut short stayed in the file, and the
 * next line, written once space was back, was glued to it: two calls lost, and a line no reader
 * could parse. The data directory is a small ext4 the test fills.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class TrajectoryFullDiskTest {
  @TempDir Path dir;
  private LoopFileSystem fs;
  private TrajectoryLog log;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

  @BeforeEach
  void mount() throws Exception {
    fs = LoopFileSystem.ext4(dir, 16L << 20);
  }

  @AfterEach
  void unmount() throws Exception {
    if (log != null) {
      log.close();
    }
    timer.shutdownNow();
    fs.close();
  }

  @Test
  void aLineCutShortByAFullDisk_isTakenBack_andTheLinesAfterItStayWhole() throws Exception {
    DataLayout layout = new DataLayout(Files.createDirectory(fs.root().resolve("data")));
    log = new TrajectoryLog(layout, ManualTime.frozen(Instant.parse("2026-11-25T15:01:02Z")), true);
    log.start(timer, Runnable::run, 0);
    Path file = layout.sessionTrajectory("local", "s1");
    record("first");
    Await.until("the first line", () -> lineCount(file), n -> n == 1);

    Path filler = fs.fill("filler");
    // More than the block the file ends in can take: whatever is left, one line is cut short.
    int lines = 40;
    for (int i = 0; i < lines; i++) {
      record("call" + i);
    }
    Await.until(
        lines + " lines written or lost", () -> lineCount(file) - 1 + log.lost(), n -> n == lines);
    long lost = log.lost();
    assertThat(lost).as("lines the full disk took").isPositive();

    Files.delete(filler);
    record("after");
    Await.until("the line after the full disk", () -> lineCount(file), n -> n == lines + 2 - lost);
    List<String> kept = Files.readAllLines(file, StandardCharsets.UTF_8);
    assertThat(kept)
        .allSatisfy(l -> assertThat(Json.mapper().readTree(l).path("tool").asText()).isNotEmpty());
    assertThat(kept.get(kept.size() - 1)).contains("\"after\"");
  }

  private void record(String tool) {
    log.record(
        "local", CallRecord.answered(Face.REST, tool, Map.of("session_id", "s1"), null, null, 0));
  }

  private static long lineCount(Path file) {
    try {
      return Files.readAllLines(file, StandardCharsets.UTF_8).size();
    } catch (java.io.IOException e) {
      return 0;
    }
  }
}

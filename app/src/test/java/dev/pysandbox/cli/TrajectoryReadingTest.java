package dev.pysandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.TrajectoryEvent;
import dev.pysandbox.api.TrajectoryEvent.ArgumentSize;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How {@code pysandbox logs} reads a trajectory file and shows its lines. */
@Fast
class TrajectoryReadingTest {
  @TempDir Path dir;

  @Test
  void tail_givesCompleteLinesOnly_andAFileThatIsNotThereYetGivesNothing() throws IOException {
    Path file = dir.resolve("s.jsonl");
    TrajectoryTail tail = new TrajectoryTail(file);
    assertThat(tail.next()).isEmpty();
    Files.writeString(file, "one\ntw");
    assertThat(tail.next()).containsExactly("one");
    assertThat(tail.unfinished()).isEqualTo("tw");
    Files.writeString(file, "o\nthree\n", StandardOpenOption.APPEND);
    assertThat(tail.next()).containsExactly("two", "three");
    assertThat(tail.unfinished()).isNull();
    assertThat(tail.next()).isEmpty();
    Files.writeString(file, "new\n"); // replaced by a shorter file: read from its start
    assertThat(tail.next()).containsExactly("new");
  }

  @Test
  void tail_refusesALink_andGivesAnEndlessLineInPieces() throws IOException {
    Path target = Files.writeString(dir.resolve("target"), "secret\n");
    Path link = Files.createSymbolicLink(dir.resolve("l.jsonl"), target);
    assertThatThrownBy(() -> new TrajectoryTail(link).next())
        .isInstanceOf(IOException.class)
        .hasMessageContaining("not a regular file");
    Path big = Files.writeString(dir.resolve("big.jsonl"), "x".repeat(200_000));
    List<String> pieces = new TrajectoryTail(big).next();
    assertThat(pieces).isNotEmpty().allSatisfy(p -> assertThat(p.length()).isLessThan(140_000));
  }

  @Test
  void text_isOneLine_withControlCharactersShownNotObeyed() throws IOException {
    Map<String, ArgumentSize> args = new LinkedHashMap<>();
    args.put("code", new ArgumentSize("string", 120L, null, null));
    args.put("packages", new ArgumentSize("array", null, 2, null));
    args.put("values", new ArgumentSize("object", null, 3, null));
    args.put("timeout_seconds", new ArgumentSize("number", null, null, 30));
    args.put("evil\u001b]0;x\u0007", new ArgumentSize("boolean", null, null, true));
    TrajectoryEvent e =
        new TrajectoryEvent(
            "2026-11-25T15:01:02.123456Z",
            "mcp_http",
            "run_python",
            "acme",
            "sess_x",
            "run_1",
            "req-1",
            args,
            null,
            "ab",
            "ok",
            null,
            "succeeded",
            12.345);
    // as written and read back
    TrajectoryEvent read = Json.mapper().readValue(Json.write(e), TrajectoryEvent.class);
    String line = TrajectoryText.line(read, Instant.parse(read.time()));
    assertThat(line)
        .isEqualTo(
            "2026-11-25T15:01:02.123Z mcp_http run_python sess_x run_1 ok succeeded 12.3 ms"
                + " req=req-1 args: code=120B packages=[2] values={3} timeout_seconds=30"
                + " evil\\x1b]0;x\\x07=true");
    TrajectoryEvent failed =
        new TrajectoryEvent(
            "2026-11-25T15:01:02Z",
            "rest",
            "get_run",
            "acme",
            null,
            null,
            null,
            null,
            null,
            null,
            "error",
            "not_found",
            null,
            0.2);
    assertThat(TrajectoryText.line(failed, Instant.parse(failed.time())))
        .isEqualTo("2026-11-25T15:01:02.000Z rest get_run - - error not_found 0.2 ms");
    assertThat(TrajectoryText.malformed("days/x.jsonl", "{\"time\u001b[2J"))
        .isEqualTo("(malformed line in days/x.jsonl: {\"time\\x1b[2J)");
  }

  @Test
  void since_takesAnAgeOrAnInstant() {
    Instant now = Instant.parse("2026-11-25T15:00:00Z");
    assertThat(LogsCommand.since("90s", now)).isEqualTo("2026-11-25T14:58:30Z");
    assertThat(LogsCommand.since("10m", now)).isEqualTo("2026-11-25T14:50:00Z");
    assertThat(LogsCommand.since("2h", now)).isEqualTo("2026-11-25T13:00:00Z");
    assertThat(LogsCommand.since("7d", now)).isEqualTo("2026-11-18T15:00:00Z");
    assertThat(LogsCommand.since("PT1H30M", now)).isEqualTo("2026-11-25T13:30:00Z");
    assertThat(LogsCommand.since("2026-11-01T00:00:00Z", now)).isEqualTo("2026-11-01T00:00:00Z");
    assertThatThrownBy(() -> LogsCommand.since("yesterday", now))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("--since 'yesterday'");
  }
}

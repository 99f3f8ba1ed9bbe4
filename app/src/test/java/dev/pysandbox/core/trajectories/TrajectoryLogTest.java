package dev.pysandbox.core.trajectories;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Fast;
import dev.pysandbox.ManualTime;
import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.CallRecord.Face;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.util.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trajectory writer on its own, on a real directory: what a line holds (and never holds), which
 * file it goes to, the line cap, a full queue, retention, and files it must not write through.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Fast
class TrajectoryLogTest {
  private static final Instant T0 = Instant.parse("2026-11-25T15:01:02Z");

  @TempDir Path dataDir;
  private final ManualTime time = ManualTime.frozen(T0);
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final List<TrajectoryLog> logs = new ArrayList<>();

  @AfterEach
  void stop() {
    logs.forEach(TrajectoryLog::close);
    timer.shutdownNow();
  }

  private DataLayout layout() {
    return new DataLayout(dataDir);
  }

  private TrajectoryLog started() {
    TrajectoryLog log = new TrajectoryLog(layout(), time, true);
    log.start(timer, Runnable::run, 0);
    logs.add(log);
    return log;
  }

  private static Map<String, Object> args(Object... pairs) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      m.put((String) pairs[i], pairs[i + 1]);
    }
    return m;
  }

  private static List<JsonNode> lines(Path file, int atLeast) throws InterruptedException {
    return Await.until(
        atLeast + " lines in " + file,
        () -> {
          try {
            List<JsonNode> out = new ArrayList<>();
            for (String l : Files.readAllLines(file, StandardCharsets.UTF_8)) {
              out.add(Json.mapper().readTree(l));
            }
            return out;
          } catch (IOException e) {
            return List.<JsonNode>of();
          }
        },
        l -> l.size() >= atLeast);
  }

  @Test
  void aLine_keepsSizesNumbersAndADigest_neverAStringsContent() throws Exception {
    TrajectoryLog log = started();
    String secret = "SECRET-" + System.nanoTime();
    Map<String, Object> a =
        args(
            "session_id",
            "s1",
            "filename",
            "notes.txt",
            "content",
            secret + "é",
            "overwrite",
            true,
            "timeout_seconds",
            30,
            "packages",
            List.of("numpy", secret),
            "values",
            Map.of("k", secret),
            "nothing",
            null);
    UploadResult uploaded = new UploadResult("s1", "notes.txt", 10, "ab", "text/plain", false);
    log.record(
        "local",
        CallRecord.answered(Face.MCP_HTTP, "upload_file", a, uploaded, "req-1", 12_345_678));
    Path file = layout().sessionTrajectory("local", "s1");
    JsonNode e = lines(file, 1).get(0);

    assertThat(e.path("time").asText()).isEqualTo("2026-11-25T15:01:01.987654Z");
    assertThat(e.path("face").asText()).isEqualTo("mcp_http");
    assertThat(e.path("tool").asText()).isEqualTo("upload_file");
    assertThat(e.path("tenant").asText()).isEqualTo("local");
    assertThat(e.path("session_id").asText()).isEqualTo("s1");
    assertThat(e.path("run_id").isNull()).isTrue();
    assertThat(e.path("request_id").asText()).isEqualTo("req-1");
    assertThat(e.path("status").asText()).isEqualTo("ok");
    assertThat(e.path("error_code").isNull()).isTrue();
    assertThat(e.path("duration_ms").asDouble()).isEqualTo(12.346);
    JsonNode sizes = e.path("arguments");
    assertThat(sizes.path("content").toString())
        .isEqualTo("{\"type\":\"string\",\"bytes\":" + (secret.length() + 2) + "}");
    assertThat(sizes.path("overwrite").toString())
        .isEqualTo("{\"type\":\"boolean\",\"value\":true}");
    assertThat(sizes.path("timeout_seconds").path("value").asInt()).isEqualTo(30);
    assertThat(sizes.path("packages").toString()).isEqualTo("{\"type\":\"array\",\"items\":2}");
    assertThat(sizes.path("values").toString()).isEqualTo("{\"type\":\"object\",\"items\":1}");
    assertThat(sizes.path("nothing").toString()).isEqualTo("{\"type\":\"null\"}");
    assertThat(e.has("arguments_omitted")).isFalse();
    // The digest is of the canonical JSON (members sorted, no white space), whatever the order.
    List<String> names = new ArrayList<>(a.keySet());
    Collections.reverse(names);
    Map<String, Object> reordered = new LinkedHashMap<>();
    names.forEach(k -> reordered.put(k, a.get(k)));
    assertThat(e.path("arguments_sha256").asText())
        .hasSize(64)
        .isEqualTo(TrajectoryEvents.digest(reordered));
    assertThat(TrajectoryEvents.digest(args("b", 1, "a", Map.of("y", 2, "x", "z"))))
        .isEqualTo(Sha256.hex("{\"a\":{\"x\":\"z\",\"y\":2},\"b\":1}"));
    assertThat(Files.readString(file)).doesNotContain(secret).doesNotContain("SECRET");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())))
        .isEqualTo("rwx------");
  }

  @Test
  void files_arePerTenantAndSession_andPerDayForCallsWithoutOne() throws Exception {
    TrajectoryLog log = started();
    log.record(
        "local",
        CallRecord.answered(
            Face.MCP_STDIO, "get_context", args("session_id", "s1"), null, null, 0));
    log.record(
        "alice",
        CallRecord.answered(Face.REST, "get_context", args("session_id", "s1"), null, null, 0));
    // a session made without an id: the result names it
    SessionInfo made = SessionInfo.of("sess_0123456789ab", null);
    log.record(
        "local", CallRecord.answered(Face.MCP_STDIO, "create_session", args(), made, null, 0));
    // a one-shot run and an id that is no id go to the day's file
    log.record(
        "local",
        new CallRecord(
            Face.CLI,
            "run_python",
            args("code", "1"),
            null,
            "run_00000000000000000001",
            null,
            null,
            RunStatus.SUCCEEDED,
            0));
    log.record(
        "local",
        CallRecord.failed(
            Face.MCP_STDIO,
            "get_context",
            args("session_id", "../../etc"),
            ErrorCode.INVALID_ARGUMENT,
            null,
            0));
    DataLayout l = layout();
    assertThat(lines(l.sessionTrajectory("local", "s1"), 1)).hasSize(1);
    assertThat(lines(l.sessionTrajectory("alice", "s1"), 1).get(0).path("face").asText())
        .isEqualTo("rest");
    assertThat(lines(l.sessionTrajectory("local", "sess_0123456789ab"), 1)).hasSize(1);
    List<JsonNode> day = lines(l.dayTrajectory("local", LocalDate.of(2026, 11, 25)), 2);
    assertThat(day)
        .extracting(n -> n.path("tool").asText())
        .containsExactly("run_python", "get_context");
    assertThat(day.get(0).path("run_status").asText()).isEqualTo("succeeded");
    assertThat(day.get(1).path("session_id").isNull()).isTrue();
    assertThat(day.get(1).path("status").asText()).isEqualTo("error");
    assertThat(day.get(1).path("error_code").asText()).isEqualTo("invalid_argument");
    assertThat(l.dayTrajectory("local", LocalDate.of(2026, 11, 25)).toString())
        .endsWith("trajectories/local/days/2026-11-25.jsonl");
    assertThat(l.sessionTrajectory("alice", "s1").toString())
        .endsWith("trajectories/alice/sessions/s1.jsonl");
  }

  @Test
  void aLongLine_isCutToTheCap_andStillNamesTheCall() throws Exception {
    TrajectoryLog log = started();
    Map<String, Object> many = new LinkedHashMap<>();
    for (int i = 0; i < 40; i++) {
      many.put(("n" + i + "-").repeat(40), "v");
    }
    many.put("session_id", "s1");
    log.record(
        "local",
        CallRecord.answered(Face.REST, "x".repeat(5000), many, null, "r".repeat(5000), 1_000));
    Path file = layout().sessionTrajectory("local", "s1");
    lines(file, 1);
    byte[] bytes = Files.readAllBytes(file);
    assertThat(bytes.length).isLessThanOrEqualTo(TrajectoryEvents.MAX_LINE_BYTES);
    JsonNode e = Json.mapper().readTree(bytes);
    assertThat(e.path("tool").asText()).startsWith("xxx").hasSizeLessThan(200);
    assertThat(e.path("session_id").asText()).isEqualTo("s1");
    assertThat(e.path("arguments_sha256").asText()).hasSize(64);
    assertThat(e.path("arguments").size() + e.path("arguments_omitted").asInt()).isEqualTo(41);
    assertThat(e.path("arguments_omitted").asInt()).isPositive();
  }

  @Test
  void aFullQueue_dropsAndCountsCalls_insteadOfHoldingThem() {
    TrajectoryLog log = new TrajectoryLog(layout(), time, true, 8); // no writer: nothing drains
    logs.add(log);
    // Nothing drains: a record that waited for room would hold this thread for good (the
    // class's timeout), so returning at all is the behaviour; the count says what was kept.
    for (int i = 0; i < 1000; i++) {
      log.record("local", CallRecord.answered(Face.REST, "list_runs", args(), null, null, 0));
    }
    assertThat(log.dropped()).isEqualTo(992);
  }

  @Test
  void close_writesWhatIsQueued_inOrder_andRecordsNothingAfter() throws Exception {
    TrajectoryLog log = started();
    for (int i = 0; i < 500; i++) {
      log.record(
          "local",
          CallRecord.answered(Face.MCP_STDIO, "t" + i, args("session_id", "s1"), null, null, 0));
    }
    log.close();
    log.record(
        "local",
        CallRecord.answered(Face.MCP_STDIO, "late", args("session_id", "s1"), null, null, 0));
    List<String> lines = Files.readAllLines(layout().sessionTrajectory("local", "s1"));
    assertThat(lines).hasSize(500);
    for (int i = 0; i < 500; i++) {
      assertThat(Json.mapper().readTree(lines.get(i)).path("tool").asText()).isEqualTo("t" + i);
    }
  }

  @Test
  void twoWriters_onOneFile_interleaveWholeLines() throws Exception {
    TrajectoryLog a = started();
    TrajectoryLog b = started();
    Thread ta = new Thread(() -> burst(a, "a"));
    Thread tb = new Thread(() -> burst(b, "b"));
    ta.start();
    tb.start();
    ta.join();
    tb.join();
    a.close();
    b.close();
    List<String> lines = Files.readAllLines(layout().sessionTrajectory("local", "shared"));
    // Every call is a whole line or counted as dropped (a queue that was full on a loaded
    // machine) or lost (not written within close's wait), never half of one.
    assertThat(lines.size() + a.dropped() + b.dropped() + a.lost() + b.lost()).isEqualTo(4000);
    for (String l : lines) {
      assertThat(Json.mapper().readTree(l).path("tool").asText()).isIn("a", "b");
    }
  }

  private static void burst(TrajectoryLog log, String tool) {
    for (int i = 0; i < 2000; i++) {
      log.record(
          "local",
          CallRecord.answered(
              Face.REST, tool, args("session_id", "shared", "pad", "x".repeat(i)), null, null, 0));
    }
  }

  @Test
  void aLinkPlantedAtTheFile_isNotWrittenThrough_andTheLineIsLost() throws Exception {
    Path sessions = dataDir.resolve("trajectories/local/sessions");
    Files.createDirectories(sessions);
    Path outside = dataDir.resolve("outside.txt");
    Files.writeString(outside, "original\n");
    Files.createSymbolicLink(sessions.resolve("s1.jsonl"), outside);
    // and a directory on the way that is a link
    Path elsewhere = Files.createDirectories(dataDir.resolve("elsewhere"));
    Files.createSymbolicLink(dataDir.resolve("trajectories/bob"), elsewhere);
    TrajectoryLog log = started();
    log.record(
        "local",
        CallRecord.answered(Face.REST, "get_run", args("session_id", "s1"), null, null, 0));
    log.record(
        "bob", CallRecord.answered(Face.REST, "get_run", args("session_id", "s1"), null, null, 0));
    Await.until("both lines lost", log::lost, n -> n == 2);
    assertThat(Files.readString(outside)).isEqualTo("original\n");
    assertThat(Files.isSymbolicLink(sessions.resolve("s1.jsonl"))).isTrue();
    try (var left = Files.list(elsewhere)) {
      assertThat(left).isEmpty();
    }
    // the writer goes on with other files
    log.record(
        "local",
        CallRecord.answered(Face.REST, "get_run", args("session_id", "s2"), null, null, 0));
    assertThat(lines(layout().sessionTrajectory("local", "s2"), 1)).hasSize(1);
  }

  @Test
  void retention_deletesOnlyTrajectoryFilesUntouchedSinceTheCutoff() throws Exception {
    Path root = dataDir.resolve("trajectories");
    Path oldSession = write(root.resolve("local/sessions/old.jsonl"), Duration.ofDays(31));
    Path newSession = write(root.resolve("local/sessions/new.jsonl"), Duration.ofDays(29));
    Path oldDay = write(root.resolve("alice/days/2026-10-01.jsonl"), Duration.ofDays(40));
    Path notOurs = write(root.resolve("local/sessions/notes.txt"), Duration.ofDays(40));
    Path target = write(dataDir.resolve("kept.jsonl"), Duration.ofDays(40));
    Path link = root.resolve("local/sessions/link.jsonl");
    Files.createSymbolicLink(link, target);

    TrajectoryLog log = new TrajectoryLog(layout(), time, true);
    logs.add(log);
    log.start(timer, Runnable::run, 30); // the first sweep runs at start
    Await.until(
        "the old files gone", () -> Files.exists(oldSession) || Files.exists(oldDay), x -> !x);
    assertThat(newSession).exists();
    assertThat(notOurs).exists();
    assertThat(target).exists();
    assertThat(Files.isSymbolicLink(link)).isTrue();
    assertThat(TrajectoryRetention.sweep(root, T0.minus(Duration.ofDays(30)))).isZero();
    assertThat(TrajectoryRetention.sweep(dataDir.resolve("none"), T0)).isZero();
  }

  private Path write(Path file, Duration age) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, "{}\n");
    Files.setLastModifiedTime(file, FileTime.from(T0.minus(age)));
    assertThat(Files.getLastModifiedTime(file, LinkOption.NOFOLLOW_LINKS).toInstant())
        .isEqualTo(T0.minus(age));
    return file;
  }
}

package dev.pysandbox.core.diffs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.github.difflib.DiffUtils;
import com.github.difflib.UnifiedDiffUtils;
import dev.pysandbox.Fast;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ArtifactChange;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.RunDiff;
import dev.pysandbox.api.RunDiff.ChangedArtifact;
import dev.pysandbox.api.RunDiff.ChangedOutput;
import dev.pysandbox.api.RunDiff.FieldChange;
import dev.pysandbox.api.RunDiff.Relationship;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.WireEnum;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The difference between two run records: relationships, the unified diffs (checked against GNU
 * diff and patch in {@link RunDiffsGnuTest}), scalar changes, files, {@code __outputs__}, the
 * summary sentence and the wire names.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Fast
class RunDiffsTest {
  @TempDir Path dir;

  static final String A = "run_aaaaaaaaaaaaaaaaaaaa";
  static final String B = "run_bbbbbbbbbbbbbbbbbbbb";

  /** A finished, successful run with every field a diff reads. */
  static RunRecord.Builder run(String id) {
    Map<String, Object> limits = new LinkedHashMap<>();
    limits.put("memory_limit_mb", 512);
    limits.put("pids_limit", 64);
    limits.put("cpu_limit", 1.0);
    return RunRecord.builder()
        .runId(id)
        .status(RunStatus.SUCCEEDED)
        .code("x = 10\ny = 2\nprint(x / y)\n")
        .stdout("5.0\n")
        .stderr("")
        .exitCode(0)
        .durationMs(300L)
        .peakMemoryBytes(40L << 20)
        .cpuMillis(250L)
        .timeoutSeconds(30)
        .limits(limits)
        .interpreter("3.11.2")
        .envHash("e1")
        .serverVersion("0.1.0")
        .backend("bwrap");
  }

  static RunRecord.Builder failingWithZeroDivision(String id) {
    return run(id)
        .status(RunStatus.FAILED)
        .code("x = 10\ny = 0\nprint(x / y)\n")
        .stdout("")
        .stderr("Traceback …\nZeroDivisionError: division by zero\n")
        .exitCode(1)
        .error(new ErrorInfo("ZeroDivisionError", "division by zero", "Traceback …"))
        .durationMs(1200L);
  }

  static Artifact kept(String path, String sha) {
    return new Artifact(path, 10, sha, "text/plain", ArtifactChange.CREATED);
  }

  // --- relationship -------------------------------------------------------------------------

  @Test
  void relationship_whenCompareToIsTheRunsParent_isParentChild() {
    RunRecord parent = run(A).build();
    RunRecord child = run(B).parentRunId(A).build();

    assertThat(RunDiffs.relationship(child, parent)).isEqualTo(Relationship.PARENT_CHILD);
  }

  @Test
  void relationship_whenRunIsCompareTosParent_isChildParent() {
    RunRecord parent = run(A).build();
    RunRecord child = run(B).parentRunId(A).build();

    assertThat(RunDiffs.relationship(parent, child)).isEqualTo(Relationship.CHILD_PARENT);
  }

  @Test
  void relationship_whenBothHaveTheSameParent_isSiblings() {
    RunRecord one = run(A).parentRunId("run_p").build();
    RunRecord two = run(B).parentRunId("run_p").build();

    assertThat(RunDiffs.relationship(two, one)).isEqualTo(Relationship.SIBLINGS);
  }

  @Test
  void relationship_whenBothRanInOneSession_isSameSession() {
    RunRecord one = run(A).sessionId("sess_1").build();
    RunRecord two = run(B).sessionId("sess_1").build();

    assertThat(RunDiffs.relationship(two, one)).isEqualTo(Relationship.SAME_SESSION);
  }

  @Test
  void relationship_whenNothingMatchesOrOnlyNullsDo_isUnrelated() {
    RunRecord one = run(A).sessionId("sess_1").parentRunId("run_p").build();
    RunRecord two = run(B).sessionId("sess_2").parentRunId("run_q").build();
    RunRecord bare1 = RunRecord.builder().build();
    RunRecord bare2 = RunRecord.builder().build();

    assertThat(RunDiffs.relationship(two, one)).isEqualTo(Relationship.UNRELATED);
    assertThat(RunDiffs.relationship(bare2, bare1)).isEqualTo(Relationship.UNRELATED);
  }

  @Test
  void relationship_whenParentAndSessionBothMatch_parentWins() {
    RunRecord parent = run(A).sessionId("sess_1").build();
    RunRecord child = run(B).sessionId("sess_1").parentRunId(A).build();
    RunRecord sibling1 = run(A).sessionId("sess_1").parentRunId("run_p").build();
    RunRecord sibling2 = run(B).sessionId("sess_1").parentRunId("run_p").build();

    assertThat(RunDiffs.relationship(child, parent)).isEqualTo(Relationship.PARENT_CHILD);
    assertThat(RunDiffs.relationship(parent, child)).isEqualTo(Relationship.CHILD_PARENT);
    assertThat(RunDiffs.relationship(sibling2, sibling1)).isEqualTo(Relationship.SIBLINGS);
  }

  @Test
  void relationship_wireNames_roundTrip() {
    for (Relationship r : Relationship.values()) {
      assertThat(WireEnum.parse(Relationship.class, r.wireName())).isEqualTo(r);
    }
    assertThat(Relationship.PARENT_CHILD.wireName()).isEqualTo("parent_child");
    assertThat(Json.write(Relationship.SAME_SESSION)).isEqualTo("\"same_session\"");
  }

  // --- code diff ----------------------------------------------------------------------------

  @Test
  void diff_whenOneLineOfCodeChanged_givesUnifiedDiffFromCompareToToRun() {
    RunRecord before = failingWithZeroDivision(A).build();
    RunRecord after = run(B).parentRunId(A).build();

    RunDiff d = RunDiffs.diff(after, before);

    assertThat(d.codeChanged()).isTrue();
    assertThat(d.codeDiff())
        .isEqualTo(
            """
            --- run_aaaaaaaaaaaaaaaaaaaa/code.py
            +++ run_bbbbbbbbbbbbbbbbbbbb/code.py
            @@ -1,3 +1,3 @@
             x = 10
            -y = 0
            +y = 2
             print(x / y)
            """);
  }

  @Test
  void diff_codeDiff_isReadBackByAUnifiedDiffParserToTheNewCode() throws Exception {
    List<String> old = numbered(40);
    List<String> now = new ArrayList<>(old);
    now.set(2, "changed near the top");
    now.add(20, "inserted in the middle");
    now.remove(35);
    now.add("appended at the end");
    RunRecord before = run(A).code(text(old)).build();
    RunRecord after = run(B).code(text(now)).build();

    String diff = RunDiffs.diff(after, before).codeDiff();

    assertThat(diff.lines().filter(l -> l.startsWith("@@")))
        .allMatch(l -> l.matches("@@ -\\d+,\\d+ \\+\\d+,\\d+ @@"))
        .hasSize(3);
    var patch = UnifiedDiffUtils.parseUnifiedDiff(diff.lines().toList());
    assertThat(DiffUtils.patch(old, patch)).isEqualTo(now);
  }

  // --- identical and status -----------------------------------------------------------------

  @Test
  void diff_ofIdenticalRuns_saysSoAndListsNothing() {
    RunRecord before = run(A).artifacts(List.of(kept("out.csv", "s1"))).build();
    RunRecord after =
        run(B).parentRunId(A).artifacts(List.of(kept("out.csv", "s1"))).durationMs(310L).build();

    RunDiff d = RunDiffs.diff(after, before);

    assertThat(d.codeChanged()).isFalse();
    assertThat(d.codeDiff()).isEmpty();
    assertThat(d.stdoutChanged()).isFalse();
    assertThat(d.stdoutDiff()).isEmpty();
    assertThat(d.stderrChanged()).isFalse();
    assertThat(d.changes()).containsExactly(new FieldChange("duration_ms", 300L, 310L));
    assertThat(d.artifacts().unchangedCount()).isEqualTo(1);
    assertThat(d.artifacts().added()).isEmpty();
    assertThat(d.outputs().changed()).isEmpty();
    assertThat(d.summary())
        .isEqualTo(B + " is identical to its parent " + A + " in code, output and files.");
  }

  @Test
  void diff_whenAFixMakesTheRunSucceed_summaryLeadsWithCodeAndStatus() {
    RunRecord before = failingWithZeroDivision(A).build();
    RunRecord after =
        run(B).parentRunId(A).artifacts(List.of(kept("result.txt", "s1"))).durationMs(300L).build();

    RunDiff d = RunDiffs.diff(after, before);

    assertThat(d.changes())
        .extracting(FieldChange::field)
        .containsExactly("status", "exit_code", "error", "duration_ms");
    assertThat(d.changes().get(0)).isEqualTo(new FieldChange("status", "failed", "succeeded"));
    assertThat(d.changes().get(2)).isEqualTo(new FieldChange("error", "ZeroDivisionError", null));
    assertThat(d.durationChangeMs()).isEqualTo(-900L);
    assertThat(d.summary())
        .isEqualTo(
            B
                + " (child of "
                + A
                + ") changed 1 line of code and now succeeds instead of failing with"
                + " ZeroDivisionError; stdout and stderr differ, 1 file was added and duration"
                + " fell from 1.2 s to 0.3 s.");
  }

  @Test
  void diff_whenTheNewRunIsKilled_summarySaysHowAndStaysOneSentence() {
    RunRecord before = run(A).sessionId("sess_1").build();
    RunRecord after =
        run(B)
            .sessionId("sess_1")
            .status(RunStatus.FAILED)
            .killReason(KillReason.MEMORY_LIMIT)
            .exitCode(null)
            .peakMemoryBytes(512L << 20)
            .build();

    RunDiff d = RunDiffs.diff(after, before);

    assertThat(d.relationship()).isEqualTo(Relationship.SAME_SESSION);
    assertThat(d.changes())
        .contains(new FieldChange("kill_reason", null, "memory_limit"))
        .contains(new FieldChange("exit_code", 0, null));
    assertThat(d.peakMemoryChangeBytes()).isEqualTo((512L << 20) - (40L << 20));
    assertThat(d.summary())
        .isEqualTo(
            B
                + " (same session as "
                + A
                + ") is now killed at its memory limit instead of succeeding;"
                + " peak memory rose from 40 MiB to 512 MiB.")
        .doesNotContain("\n");
  }

  @Test
  void summary_whenEverythingDiffersAndNamesAreLong_staysOneSentenceOfAtMost300Chars() {
    String longId = "run_" + "f".repeat(500);
    Map<String, Object> outputs = new LinkedHashMap<>();
    for (int i = 0; i < 50; i++) {
      outputs.put("key_" + "k".repeat(100) + i, i);
    }
    RunRecord before = failingWithZeroDivision(A).build();
    RunRecord after =
        run(longId)
            .parentRunId(A)
            .status(RunStatus.FAILED)
            .error(new ErrorInfo("E".repeat(1000), "", ""))
            .code("changed\n".repeat(100))
            .stdout("other\n")
            .artifacts(List.of(kept("a", "1"), kept("b", "2")))
            .outputs(outputs)
            .interpreter("3.13.0")
            .envHash("e9")
            .serverVersion("9".repeat(400))
            .backend("docker")
            .timeoutSeconds(99)
            .durationMs(99_000L)
            .build();

    String summary = RunDiffs.diff(after, before).summary();

    assertThat(summary)
        .hasSizeLessThanOrEqualTo(RunDiffSummary.MAX_CHARS)
        .endsWith(".")
        .doesNotContain("\n")
        .contains("now fails with EEEE")
        .contains("other details differ");
  }

  @Test
  void diff_whenCodeChangedButTheSameErrorRemains_saysStillFails() {
    RunRecord before = failingWithZeroDivision(A).build();
    RunRecord after =
        failingWithZeroDivision(B).parentRunId(A).code("x = 1\ny = 0\nprint(x / y)\n").build();

    assertThat(RunDiffs.diff(after, before).summary())
        .isEqualTo(
            B
                + " (child of "
                + A
                + ") changed 1 line of code but still fails with ZeroDivisionError.");
  }

  // --- files and outputs --------------------------------------------------------------------

  @Test
  void diff_artifacts_byPathAndSha_ignoringDeletedAndSkippedFiles() {
    RunRecord before =
        run(A)
            .artifacts(
                List.of(
                    kept("same.csv", "s1"),
                    kept("changed.csv", "old"),
                    kept("gone.csv", "g"),
                    new Artifact("was-deleted.txt", 0, null, "text/plain", ArtifactChange.DELETED),
                    new Artifact("link", 0, null, null, ArtifactChange.CREATED, "symbolic link")))
            .build();
    RunRecord after =
        run(B)
            .artifacts(
                List.of(
                    kept("same.csv", "s1"),
                    kept("changed.csv", "new"),
                    kept("new.png", "n"),
                    new Artifact("gone.csv", 0, null, "text/csv", ArtifactChange.DELETED),
                    new Artifact("big.bin", 0, null, null, ArtifactChange.CREATED, "over quota")))
            .build();

    RunDiff.ArtifactDiff a = RunDiffs.diff(after, before).artifacts();

    assertThat(a.added()).containsExactly("new.png");
    assertThat(a.removed()).containsExactly("gone.csv");
    assertThat(a.changed()).containsExactly(new ChangedArtifact("changed.csv", "old", "new"));
    assertThat(a.unchangedCount()).isEqualTo(1);
    assertThat(RunDiffs.diff(after, before).summary())
        .contains("files differ (1 added, 1 removed, 1 changed)");
  }

  @Test
  void diff_outputs_perKeyAsJsonValues() {
    Map<String, Object> was = new LinkedHashMap<>();
    was.put("n", 1);
    was.put("ratio", 0.5);
    was.put("model", Map.of("layers", 3, "name", "m", "sizes", List.of(1, 2)));
    was.put("order", List.of(1, 2));
    was.put("gone", "x");
    was.put("nothing", null);
    Map<String, Object> now = new LinkedHashMap<>();
    now.put("n", 1.0);
    now.put("ratio", 0.75);
    now.put("model", Map.of("sizes", List.of(1.0, 2), "name", "m", "layers", 3.0));
    now.put("order", List.of(2, 1));
    now.put("nothing", null);
    now.put("added", Map.of("deep", Map.of("x", 1)));

    RunDiff d = RunDiffs.diff(run(B).outputs(now).build(), run(A).outputs(was).build());

    assertThat(d.outputs().added()).containsExactly("added");
    assertThat(d.outputs().removed()).containsExactly("gone");
    assertThat(d.outputs().changed())
        .containsExactly(
            new ChangedOutput("order", List.of(1, 2), List.of(2, 1)),
            new ChangedOutput("ratio", 0.5, 0.75));
    assertThat(d.summary()).contains("__outputs__ differ in 4 keys (added, gone, order, …)");
  }

  @Test
  void diff_outputs_nestedMapsDifferingDeepDown_areChanged() {
    Map<String, Object> was = Map.of("cfg", Map.of("a", Map.of("b", List.of(Map.of("c", 1)))));
    Map<String, Object> now = Map.of("cfg", Map.of("a", Map.of("b", List.of(Map.of("c", 2)))));

    RunDiff d = RunDiffs.diff(run(B).outputs(now).build(), run(A).outputs(was).build());

    assertThat(d.outputs().changed()).extracting(ChangedOutput::key).containsExactly("cfg");
  }

  @Test
  void diff_limits_perKeyWithNumbersByValue() {
    Map<String, Object> limits = new LinkedHashMap<>(run(A).build().limits());
    limits.put("memory_limit_mb", 1024);
    limits.put("cpu_limit", 1);
    RunRecord after = run(B).limits(limits).timeoutSeconds(60).build();

    RunDiff d = RunDiffs.diff(after, run(A).build());

    assertThat(d.changes())
        .containsExactly(
            new FieldChange("timeout_seconds", 30, 60),
            new FieldChange("limits.memory_limit_mb", 512, 1024));
    assertThat(d.summary())
        .isEqualTo(
            B
                + " is identical to "
                + A
                + " in code, output and files, but limits differ (timeout_seconds 30 → 60,"
                + " memory_limit_mb 512 → 1024).");
  }

  // --- provenance, odd data and size --------------------------------------------------------

  @Test
  void diff_whenInterpreterAndPackagesChanged_listsThemAndSummarySaysEnvironment() {
    RunRecord before = run(A).parentRunId("run_p").build();
    RunRecord after =
        run(B)
            .parentRunId("run_p")
            .interpreter("3.12.1")
            .envHash("e2")
            .stdout("5.0\nDeprecationWarning\n")
            .build();

    RunDiff d = RunDiffs.diff(after, before);

    assertThat(d.changes())
        .containsExactly(
            new FieldChange("interpreter", "3.11.2", "3.12.1"),
            new FieldChange("env_hash", "e1", "e2"));
    assertThat(d.summary())
        .isEqualTo(
            B
                + " (sibling of "
                + A
                + ") ran the same code with the same outcome, but stdout differs and the"
                + " environment differs (Python 3.11.2 → 3.12.1, installed packages).");
  }

  @Test
  void diff_ofNearlyEmptyRecords_doesNotThrowAndSaysTheCodeWasNotRecorded() {
    RunRecord bare = RunRecord.builder().build();
    RunRecord withCode =
        RunRecord.builder().runId(B).code("print(1)\n").artifacts(List.of(kept(null, "x"))).build();

    RunDiff bareVsBare = RunDiffs.diff(bare, bare);
    RunDiff d = RunDiffs.diff(withCode, RunRecord.builder().runId(A).build());

    assertThat(bareVsBare.codeChanged()).isFalse();
    assertThat(bareVsBare.durationChangeMs()).isNull();
    assertThat(bareVsBare.peakMemoryChangeBytes()).isNull();
    assertThat(bareVsBare.changes()).isEmpty();
    assertThat(bareVsBare.summary())
        .isEqualTo(
            "unknown is identical to unknown in output and files, but neither run's code was"
                + " recorded.");
    assertThat(d.codeChanged()).isTrue();
    assertThat(d.codeDiff()).contains("@@ -0,0 +1,1 @@\n+print(1)\n");
    assertThat(d.durationChangeMs()).isNull();
    assertThat(d.artifacts().added()).isEmpty();
    assertThat(d.summary())
        .isEqualTo(
            B
                + " (unrelated to "
                + A
                + ") added 1 line of code (the code of "
                + A
                + " was not recorded, so it counts as empty).");
  }

  @Test
  void diff_ofHugeDifferentStdout_isCappedWithANote() {
    String old = IntStream.range(0, 300_000).mapToObj(i -> "a" + i).collect(joinLines());
    String now = IntStream.range(0, 300_000).mapToObj(i -> "b" + i).collect(joinLines());

    RunDiff d = RunDiffs.diff(run(B).stdout(now).build(), run(A).stdout(old).build());

    assertThat(d.stdoutChanged()).isTrue();
    assertThat(d.stdoutDiff().length()).isLessThanOrEqualTo(RunDiff.MAX_DIFF_CHARS);
    assertThat(d.stdoutDiff())
        .startsWith("--- " + A + "/stdout\n+++ " + B + "/stdout\n@@ -1,300000 +1,300000 @@\n-a0\n")
        .containsPattern("\\[diff truncated: \\d+ more lines \\(\\d+ characters\\) not shown]\n$");
    assertThat(d.summary()).contains("stdout differs");
  }

  @Test
  void diff_ofLongStdoutWithOneChangedLine_keepsTheDiffSmall() {
    List<String> lines = numbered(200_000);
    String old = text(lines);
    String now = old.replace("line 100000\n", "line 100000 changed\n");

    String diff =
        RunDiffs.diff(run(B).stdout(now).build(), run(A).stdout(old).build()).stdoutDiff();

    assertThat(diff)
        .isEqualTo(
            "--- "
                + A
                + "/stdout\n+++ "
                + B
                + "/stdout\n"
                + """
                @@ -99998,7 +99998,7 @@
                 line 99997
                 line 99998
                 line 99999
                -line 100000
                +line 100000 changed
                 line 100001
                 line 100002
                 line 100003
                """);
  }

  /**
   * 1200 replaced lines in 60 000 go past the plain search's budget (measured: it gives up), so the
   * linear-space search answers, its deltas joined; a whole-text replacement would fail the
   * sequences below.
   */
  @Test
  void diff_ofManyScatteredChanges_staysMinimalAndShowsEachReplacementAsMinusThenPlus()
      throws Exception {
    List<String> old = numbered(60_000);
    List<String> now = new ArrayList<>(old);
    for (int i = 0; i < now.size(); i += 50) {
      now.set(i, "changed " + i);
    }

    RunDiff d = RunDiffs.diff(run(B).code(text(now)).build(), run(A).code(text(old)).build());

    assertThat(d.codeDiff()).doesNotContain("[diff truncated");
    assertThat(d.codeDiff().lines().toList())
        .containsSequence("-line 50", "+changed 50")
        .containsSequence("-line 59950", "+changed 59950");
    var patch = UnifiedDiffUtils.parseUnifiedDiff(d.codeDiff().lines().toList());
    assertThat(DiffUtils.patch(old, patch)).isEqualTo(now);
    assertThat(d.summary()).contains("changed 1200 lines of code");
  }

  // --- wire ---------------------------------------------------------------------------------

  @Test
  void json_usesSnakeCaseNames() throws Exception {
    RunRecord before = failingWithZeroDivision(A).artifacts(List.of(kept("f", "1"))).build();
    RunRecord after =
        run(B).parentRunId(A).artifacts(List.of(kept("f", "2"))).outputs(Map.of("k", 1)).build();

    Map<String, Object> json =
        Json.mapper()
            .readValue(
                Json.write(RunDiffs.diff(after, before)),
                new TypeReference<Map<String, Object>>() {});

    assertThat(json)
        .containsOnlyKeys(
            "run_id",
            "compare_to",
            "relationship",
            "code_changed",
            "code_diff",
            "stdout_changed",
            "stdout_diff",
            "stderr_changed",
            "changes",
            "duration_change_ms",
            "peak_memory_change_bytes",
            "artifacts",
            "outputs",
            "summary");
    assertThat(json.get("relationship")).isEqualTo("parent_child");
    assertThat(map(json.get("artifacts")))
        .containsOnlyKeys("added", "removed", "changed", "unchanged_count");
    assertThat(map(((List<?>) map(json.get("artifacts")).get("changed")).get(0)))
        .containsOnlyKeys("path", "before_sha256", "after_sha256");
    assertThat(map(json.get("outputs"))).containsOnlyKeys("added", "removed", "changed");
    assertThat(map(((List<?>) json.get("changes")).get(0)))
        .containsOnlyKeys("field", "before", "after");
    assertThat(map(((List<?>) json.get("changes")).get(0)))
        .containsEntry("field", "status")
        .containsEntry("before", "failed")
        .containsEntry("after", "succeeded");
  }

  // --- helpers ------------------------------------------------------------------------------

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }

  static List<String> numbered(int n) {
    return IntStream.range(0, n).mapToObj(i -> "line " + i).collect(Collectors.toList());
  }

  static String text(List<String> lines) {
    return lines.stream().map(l -> l + "\n").collect(Collectors.joining());
  }

  static java.util.stream.Collector<CharSequence, ?, String> joinLines() {
    return Collectors.joining("\n", "", "\n");
  }
}

package dev.pysandbox.core.diffs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ArtifactChange;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunDiff;
import dev.pysandbox.api.RunDiff.ArtifactDiff;
import dev.pysandbox.api.RunDiff.ChangedArtifact;
import dev.pysandbox.api.RunDiff.ChangedOutput;
import dev.pysandbox.api.RunDiff.FieldChange;
import dev.pysandbox.api.RunDiff.OutputDiff;
import dev.pysandbox.api.RunDiff.Relationship;
import dev.pysandbox.api.RunRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The difference between two recorded runs ({@code diff_runs}), from {@code compareTo} (before) to
 * {@code run} (after). Pure: it reads the two records and nothing else, and takes whatever they
 * hold (missing code, output or fields read as empty or unknown) without throwing.
 */
public final class RunDiffs {
  private RunDiffs() {}

  /** How {@code run} is related to {@code compareTo}: the first of the enum's order that holds. */
  static Relationship relationship(RunRecord run, RunRecord compareTo) {
    Objects.requireNonNull(run, "run");
    Objects.requireNonNull(compareTo, "compareTo");
    if (run.parentRunId() != null && run.parentRunId().equals(compareTo.runId())) {
      return Relationship.PARENT_CHILD;
    }
    if (compareTo.parentRunId() != null && compareTo.parentRunId().equals(run.runId())) {
      return Relationship.CHILD_PARENT;
    }
    if (run.parentRunId() != null && run.parentRunId().equals(compareTo.parentRunId())) {
      return Relationship.SIBLINGS;
    }
    if (run.sessionId() != null && run.sessionId().equals(compareTo.sessionId())) {
      return Relationship.SAME_SESSION;
    }
    return Relationship.UNRELATED;
  }

  /** The diff from {@code compareTo} (the base) to {@code run} (the new run). */
  public static RunDiff diff(RunRecord run, RunRecord compareTo) {
    Relationship relationship = relationship(run, compareTo);
    String after = name(run.runId());
    String before = name(compareTo.runId());
    UnifiedDiffs.TextDiff code =
        UnifiedDiffs.diff(
            compareTo.code(),
            run.code(),
            before + "/code.py",
            after + "/code.py",
            RunDiff.MAX_DIFF_CHARS);
    UnifiedDiffs.TextDiff stdout =
        UnifiedDiffs.diff(
            compareTo.stdout(),
            run.stdout(),
            before + "/stdout",
            after + "/stdout",
            RunDiff.MAX_DIFF_CHARS);
    RunDiff draft =
        new RunDiff(
            run.runId(),
            compareTo.runId(),
            relationship,
            !code.text().isEmpty(),
            code.text(),
            !stdout.text().isEmpty(),
            stdout.text(),
            !orEmpty(run.stderr()).equals(orEmpty(compareTo.stderr())),
            changes(compareTo, run),
            minus(run.durationMs(), compareTo.durationMs()),
            minus(run.peakMemoryBytes(), compareTo.peakMemoryBytes()),
            artifacts(compareTo.artifacts(), run.artifacts()),
            outputs(compareTo.outputs(), run.outputs()),
            "");
    String summary = RunDiffSummary.sentence(draft, run, compareTo, code);
    return new RunDiff(
        draft.runId(),
        draft.compareTo(),
        draft.relationship(),
        draft.codeChanged(),
        draft.codeDiff(),
        draft.stdoutChanged(),
        draft.stdoutDiff(),
        draft.stderrChanged(),
        draft.changes(),
        draft.durationChangeMs(),
        draft.peakMemoryChangeBytes(),
        draft.artifacts(),
        draft.outputs(),
        summary);
  }

  /** The scalar fields that differ, in the order {@link RunDiff#changes()} documents. */
  static List<FieldChange> changes(RunRecord before, RunRecord after) {
    List<FieldChange> changes = new ArrayList<>();
    field(changes, "status", before, after, r -> r.status() == null ? null : r.status().wireName());
    field(changes, "exit_code", before, after, RunRecord::exitCode);
    field(
        changes,
        "kill_reason",
        before,
        after,
        r -> r.killReason() == null ? null : r.killReason().wireName());
    field(changes, "error", before, after, r -> r.error() == null ? null : r.error().name());
    field(changes, "duration_ms", before, after, RunRecord::durationMs);
    field(changes, "peak_memory_bytes", before, after, RunRecord::peakMemoryBytes);
    field(changes, "cpu_millis", before, after, RunRecord::cpuMillis);
    field(changes, "timeout_seconds", before, after, RunRecord::timeoutSeconds);
    for (String key : keys(before.limits(), after.limits(), LinkedHashSet::new)) {
      Object was = before.limits().get(key);
      Object now = after.limits().get(key);
      if (!sameJson(was, now)) {
        changes.add(new FieldChange("limits." + key, was, now));
      }
    }
    field(changes, "tier", before, after, RunRecord::tier);
    field(changes, "interpreter", before, after, RunRecord::interpreter);
    field(changes, "env_hash", before, after, RunRecord::envHash);
    field(changes, "server_version", before, after, RunRecord::serverVersion);
    field(changes, "backend", before, after, RunRecord::backend);
    return changes;
  }

  private static void field(
      List<FieldChange> changes,
      String field,
      RunRecord before,
      RunRecord after,
      Function<RunRecord, Object> value) {
    Object was = value.apply(before);
    Object now = value.apply(after);
    if (!Objects.equals(was, now)) {
      changes.add(new FieldChange(field, was, now));
    }
  }

  /** The files kept with each run, by path; deleted and skipped ones are not kept. */
  static ArtifactDiff artifacts(List<Artifact> before, List<Artifact> after) {
    Map<String, String> was = kept(before);
    Map<String, String> now = kept(after);
    List<String> added = new ArrayList<>();
    List<String> removed = new ArrayList<>();
    List<ChangedArtifact> changed = new ArrayList<>();
    int unchanged = 0;
    for (String path : keys(was, now, TreeSet::new)) {
      if (!was.containsKey(path)) {
        added.add(path);
      } else if (!now.containsKey(path)) {
        removed.add(path);
      } else if (Objects.equals(was.get(path), now.get(path))) {
        unchanged++;
      } else {
        changed.add(new ChangedArtifact(path, was.get(path), now.get(path)));
      }
    }
    return new ArtifactDiff(added, removed, changed, unchanged);
  }

  /** Path to sha256 of the files kept with a run (a later entry for a path wins). */
  private static Map<String, String> kept(List<Artifact> artifacts) {
    Map<String, String> kept = new TreeMap<>();
    for (Artifact a : artifacts == null ? List.<Artifact>of() : artifacts) {
      if (a != null
          && a.path() != null
          && a.change() != ArtifactChange.DELETED
          && a.skipped() == null) {
        kept.put(a.path(), a.sha256());
      }
    }
    return kept;
  }

  /** The {@code __outputs__} dicts per key, values compared as JSON. */
  static OutputDiff outputs(Map<String, Object> before, Map<String, Object> after) {
    Map<String, Object> was = before == null ? Map.of() : before;
    Map<String, Object> now = after == null ? Map.of() : after;
    List<String> added = new ArrayList<>();
    List<String> removed = new ArrayList<>();
    List<ChangedOutput> changed = new ArrayList<>();
    for (String key : keys(was, now, TreeSet::new)) {
      if (!was.containsKey(key)) {
        added.add(key);
      } else if (!now.containsKey(key)) {
        removed.add(key);
      } else if (!sameJson(was.get(key), now.get(key))) {
        changed.add(new ChangedOutput(key, was.get(key), now.get(key)));
      }
    }
    return new OutputDiff(added, removed, changed);
  }

  /** The non-null keys of both maps, in the order {@code set} keeps. */
  private static Set<String> keys(Map<String, ?> a, Map<String, ?> b, Supplier<Set<String>> set) {
    Set<String> keys = set.get();
    for (Map<String, ?> m : List.of(a, b)) {
      for (String key : m.keySet()) {
        if (key != null) {
          keys.add(key);
        }
      }
    }
    return keys;
  }

  /** JSON equality: numbers by value ({@code 1} is {@code 1.0}), objects in any member order. */
  static boolean sameJson(Object a, Object b) {
    return tree(a).equals(BY_VALUE, tree(b));
  }

  private static final Comparator<JsonNode> BY_VALUE =
      (x, y) -> (x.isNumber() && y.isNumber() ? sameNumber(x, y) : x.equals(y)) ? 0 : 1;

  private static boolean sameNumber(JsonNode x, JsonNode y) {
    boolean finite =
        !(x.isFloatingPointNumber() && !Double.isFinite(x.doubleValue()))
            && !(y.isFloatingPointNumber() && !Double.isFinite(y.doubleValue()));
    return finite
        ? x.decimalValue().compareTo(y.decimalValue()) == 0
        : Double.compare(x.doubleValue(), y.doubleValue()) == 0;
  }

  private static JsonNode tree(Object value) {
    if (value == null) {
      return NullNode.getInstance();
    }
    try {
      JsonNode node = Json.mapper().valueToTree(value);
      return node == null ? NullNode.getInstance() : node;
    } catch (IllegalArgumentException e) {
      return TextNode.valueOf(String.valueOf(value));
    }
  }

  private static Long minus(Long after, Long before) {
    return after == null || before == null ? null : after - before;
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }

  /** A run id as the diff headers and the summary show it. */
  static String name(String runId) {
    return runId == null || runId.isBlank() ? "unknown" : runId;
  }
}

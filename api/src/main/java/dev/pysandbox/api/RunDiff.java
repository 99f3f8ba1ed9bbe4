package dev.pysandbox.api;

import java.util.List;

/**
 * What {@code diff_runs} returns: how one recorded run differs from another. The diff goes FROM
 * {@code compareTo} (the base, usually the older run or the parent) TO {@code runId} (the new one):
 * "before" is {@code compareTo}, "after" is {@code runId}, a line a unified diff marks {@code +} is
 * in {@code runId} only.
 *
 * @param runId the new run (the diff's "after" side)
 * @param compareTo the base run (the diff's "before" side)
 * @param relationship how the two runs are related, seen from {@code runId}
 * @param codeChanged true when the code differs; a run whose code is not recorded counts as empty
 *     code (and {@code summary} says so)
 * @param codeDiff unified diff of the code ({@code --- <compare_to>/code.py}, {@code +++
 *     <run_id>/code.py}, 3 lines of context, a newline after every line); empty when the code is
 *     the same. Over {@value #MAX_DIFF_CHARS} characters it is cut at a line end and ends with a
 *     line saying how much was left out (a cut diff is for reading, not for {@code patch})
 * @param stdoutChanged true when the captured stdout differs (a missing stdout counts as empty)
 * @param stdoutDiff unified diff of stdout ({@code <compare_to>/stdout}, {@code <run_id>/stdout}),
 *     the same form and cap as {@code codeDiff}
 * @param stderrChanged true when the captured stderr differs (no diff: read it with {@code
 *     get_run})
 * @param changes the scalar fields that differ, in a fixed order: {@code status}, {@code
 *     exit_code}, {@code kill_reason}, {@code error} (the exception's name), {@code duration_ms},
 *     {@code peak_memory_bytes}, {@code cpu_millis}, {@code timeout_seconds}, {@code limits.<key>}
 *     per limit, {@code tier}, {@code interpreter}, {@code env_hash}, {@code server_version},
 *     {@code backend}; empty when none differs
 * @param durationChangeMs {@code duration_ms} after minus before, in milliseconds; {@code null}
 *     when either run has no duration
 * @param peakMemoryChangeBytes {@code peak_memory_bytes} after minus before; {@code null} when
 *     either run has none
 * @param artifacts the files kept with each run, compared by path and sha256
 * @param outputs the {@code __outputs__} dicts, compared per key
 * @param summary one plain-English sentence, most important difference first (status, code, output,
 *     files, outputs, environment), at most about 300 characters
 */
public record RunDiff(
    String runId,
    String compareTo,
    Relationship relationship,
    boolean codeChanged,
    String codeDiff,
    boolean stdoutChanged,
    String stdoutDiff,
    boolean stderrChanged,
    List<FieldChange> changes,
    Long durationChangeMs,
    Long peakMemoryChangeBytes,
    ArtifactDiff artifacts,
    OutputDiff outputs,
    String summary) {

  /** The longest {@code codeDiff} or {@code stdoutDiff}, in characters, before it is cut. */
  public static final int MAX_DIFF_CHARS = 200_000;

  public RunDiff {
    codeDiff = codeDiff == null ? "" : codeDiff;
    stdoutDiff = stdoutDiff == null ? "" : stdoutDiff;
    changes = changes == null ? List.of() : List.copyOf(changes);
    artifacts = artifacts == null ? new ArtifactDiff(null, null, null, 0) : artifacts;
    outputs = outputs == null ? new OutputDiff(null, null, null) : outputs;
  }

  /** How {@code run_id} is related to {@code compare_to}; the first that holds, in this order. */
  public enum Relationship implements WireEnum {
    /** {@code compare_to} is {@code run_id}'s parent ({@code run_id} re-ran it). */
    PARENT_CHILD,
    /** {@code run_id} is {@code compare_to}'s parent. */
    CHILD_PARENT,
    /** Both have the same parent. */
    SIBLINGS,
    /** Both ran in the same session (and neither is the other's parent, nor are they siblings). */
    SAME_SESSION,
    /** None of the above. */
    UNRELATED;

    @Override
    public String toString() {
      return wireName();
    }
  }

  /**
   * One scalar field that differs.
   *
   * @param field its name on the wire ({@code status}, {@code limits.memory_limit_mb} …)
   * @param before its value in {@code compare_to} (wire form: {@code failed}, not an enum), or
   *     {@code null}
   * @param after its value in {@code run_id}, or {@code null}
   */
  public record FieldChange(String field, Object before, Object after) {}

  /**
   * The files kept with each run, by path. A file the run deleted, or one it made but that was not
   * kept ({@link Artifact#skipped()}), counts as absent.
   *
   * @param added paths kept with {@code run_id} only, in path order
   * @param removed paths kept with {@code compare_to} only, in path order
   * @param changed paths kept with both whose sha256 differs, in path order
   * @param unchangedCount paths kept with both with the same sha256
   */
  public record ArtifactDiff(
      List<String> added, List<String> removed, List<ChangedArtifact> changed, int unchangedCount) {
    public ArtifactDiff {
      added = added == null ? List.of() : List.copyOf(added);
      removed = removed == null ? List.of() : List.copyOf(removed);
      changed = changed == null ? List.of() : List.copyOf(changed);
    }
  }

  /**
   * A file kept with both runs whose content differs.
   *
   * @param path path relative to {@code /mnt/data}
   * @param beforeSha256 its sha256 in {@code compare_to}
   * @param afterSha256 its sha256 in {@code run_id}
   */
  public record ChangedArtifact(String path, String beforeSha256, String afterSha256) {}

  /**
   * The {@code __outputs__} dicts, per key. Values are compared as JSON: numbers by value ({@code
   * 1} equals {@code 1.0}), objects by their members in any order, arrays in order.
   *
   * @param added keys only {@code run_id} has, sorted
   * @param removed keys only {@code compare_to} has, sorted
   * @param changed keys both have with different values, sorted
   */
  public record OutputDiff(List<String> added, List<String> removed, List<ChangedOutput> changed) {
    public OutputDiff {
      added = added == null ? List.of() : List.copyOf(added);
      removed = removed == null ? List.of() : List.copyOf(removed);
      changed = changed == null ? List.of() : List.copyOf(changed);
    }
  }

  /**
   * One {@code __outputs__} key whose value differs.
   *
   * @param key the key
   * @param before its value in {@code compare_to} (may be JSON {@code null})
   * @param after its value in {@code run_id} (may be JSON {@code null})
   */
  public record ChangedOutput(String key, Object before, Object after) {}
}

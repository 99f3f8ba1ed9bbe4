package dev.pysandbox.core.diffs;

import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.RunDiff;
import dev.pysandbox.api.RunDiff.FieldChange;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The one sentence of {@link RunDiff#summary()}. Why it is built this way: an agent reads it first
 * and may read nothing else, so the run's own changes lead (code, then outcome: "changed 2 lines of
 * code and now succeeds instead of failing with ZeroDivisionError"), then what others see (stdout,
 * files, {@code __outputs__}), then where it ran (environment, limits) and how long it took. Past
 * {@link #MAX_CHARS} the last clauses give way to "other details differ".
 */
final class RunDiffSummary {
  static final int MAX_CHARS = 300;

  private static final long MIB = 1024L * 1024;

  private RunDiffSummary() {}

  static String sentence(RunDiff d, RunRecord after, RunRecord before, UnifiedDiffs.TextDiff code) {
    String id = clip(RunDiffs.name(d.runId()), 40);
    String base = clip(RunDiffs.name(d.compareTo()), 40);
    Outcome was = Outcome.of(before);
    Outcome now = Outcome.of(after);
    boolean outcomeChanged = !was.equals(now);
    String codeNote = codeNote(after.code() == null, before.code() == null, id, base);
    boolean codeKnown = after.code() != null && before.code() != null;

    List<String> predicates = new ArrayList<>();
    if (d.codeChanged()) {
      predicates.add(codePhrase(code) + (codeNote == null ? "" : " (" + codeNote + ")"));
    }
    String predicateJoiner = " and ";
    if (outcomeChanged) {
      String present = now.present();
      predicates.add(
          (present.startsWith("is ") ? "is now " + present.substring(3) : "now " + present)
              + " instead of "
              + was.gerund());
    } else if (now.still() != null) {
      predicates.add(now.still());
      predicateJoiner = " but ";
    }

    List<String> clauses = new ArrayList<>();
    boolean seenChanged = d.stdoutChanged() || d.stderrChanged();
    if (seenChanged) {
      clauses.add(
          d.stdoutChanged() && d.stderrChanged()
              ? "stdout and stderr differ"
              : d.stdoutChanged() ? "stdout differs" : "stderr differs");
    }
    String files = files(d.artifacts());
    String outputs = outputs(d.outputs());
    if (files != null) {
      clauses.add(files);
    }
    if (outputs != null) {
      clauses.add(outputs);
    }
    if (!d.codeChanged() && codeNote != null) {
      clauses.add(codeNote);
    }
    addIfPresent(clauses, environment(d.changes()));
    addIfPresent(clauses, limits(d.changes()));
    addIfPresent(clauses, duration(before.durationMs(), after.durationMs()));
    addIfPresent(clauses, memory(before.peakMemoryBytes(), after.peakMemoryBytes()));

    String subject = id + " (" + relation(d.relationship(), base) + ")";
    String lead;
    String joiner;
    boolean identical =
        !d.codeChanged() && !outcomeChanged && !seenChanged && files == null && outputs == null;
    if (identical) {
      lead =
          id
              + " is identical to "
              + relative(d.relationship(), base)
              + (codeKnown ? " in code, output and files" : " in output and files");
      joiner = ", but ";
    } else if (predicates.isEmpty()) {
      lead =
          subject
              + (codeKnown ? " ran the same code with the same outcome" : " has the same outcome");
      joiner = ", but ";
    } else {
      lead = subject + " " + String.join(predicateJoiner, predicates);
      joiner = "; ";
    }
    return fit(lead, joiner, clauses);
  }

  /** The sentence, dropping clauses from the end (said as "other details differ") to fit. */
  private static String fit(String lead, String joiner, List<String> clauses) {
    List<String> kept = new ArrayList<>(clauses);
    String s = render(lead, joiner, kept);
    while (s.length() > MAX_CHARS && !kept.isEmpty()) {
      kept.remove(kept.size() - 1);
      List<String> shown = new ArrayList<>(kept);
      shown.add("other details differ");
      s = render(lead, joiner, shown);
    }
    return s.length() <= MAX_CHARS ? s : s.substring(0, MAX_CHARS - 2) + "….";
  }

  private static String render(String lead, String joiner, List<String> clauses) {
    return clauses.isEmpty() ? lead + "." : lead + joiner + joinAnd(clauses) + ".";
  }

  /** How a run ended, as the sentence says it. */
  record Outcome(String present, String gerund, String still) {
    /** The statuses said the same whatever else the run holds: a table, not a case each. */
    private static final Map<RunStatus, Outcome> PLAIN =
        Map.of(
            RunStatus.SUCCEEDED, new Outcome("succeeds", "succeeding", null),
            RunStatus.PENDING, new Outcome("is pending", "being pending", null),
            RunStatus.AWAITING_APPROVAL, new Outcome("awaits approval", "awaiting approval", null),
            RunStatus.RUNNING, new Outcome("is running", "running", null),
            RunStatus.REJECTED, new Outcome("is rejected", "being rejected", null),
            RunStatus.CANCELLED, new Outcome("is cancelled", "being cancelled", null));

    static Outcome of(RunRecord r) {
      RunStatus s = r.status();
      if (s == null) {
        return new Outcome("has no status", "having no status", null);
      }
      Outcome plain = PLAIN.get(s);
      if (plain != null) {
        return plain;
      }
      if (r.killReason() != null) {
        return killed(r.killReason());
      }
      if (s == RunStatus.TIMED_OUT) {
        return killed(KillReason.TIMEOUT);
      }
      if (s == RunStatus.INTERRUPTED) {
        return new Outcome("is interrupted", "being interrupted", null);
      }
      String with =
          r.error() != null && r.error().name() != null
              ? " with " + clip(r.error().name(), 60)
              : r.exitCode() != null && r.exitCode() != 0 ? " with exit code " + r.exitCode() : "";
      return new Outcome("fails" + with, "failing" + with, "still fails" + with);
    }

    private static Outcome killed(KillReason reason) {
      String at =
          switch (reason) {
            case TIMEOUT -> null;
            case MEMORY_LIMIT -> "at its memory limit";
            case PIDS_LIMIT -> "at its process limit";
            case DISK_QUOTA -> "at its disk quota";
            case OUTPUT_LIMIT -> "at the output limit";
            case PROTOCOL_VIOLATION -> "for breaking the worker protocol";
          };
      return at == null
          ? new Outcome("times out", "timing out", "still times out")
          : new Outcome("is killed " + at, "being killed " + at, "is still killed " + at);
    }
  }

  private static String codePhrase(UnifiedDiffs.TextDiff code) {
    if (code.linesRemoved() == 0) {
      return "added " + lines(code.linesAdded()) + " of code";
    }
    if (code.linesAdded() == 0) {
      return "removed " + lines(code.linesRemoved()) + " of code";
    }
    return "changed " + lines(code.linesChanged()) + " of code";
  }

  private static String codeNote(
      boolean afterMissing, boolean beforeMissing, String id, String base) {
    if (afterMissing && beforeMissing) {
      return "neither run's code was recorded";
    }
    if (afterMissing || beforeMissing) {
      return "the code of "
          + (afterMissing ? id : base)
          + " was not recorded, so it counts as empty";
    }
    return null;
  }

  private static String relation(RunDiff.Relationship r, String base) {
    return switch (r) {
      case PARENT_CHILD -> "child of " + base;
      case CHILD_PARENT -> "parent of " + base;
      case SIBLINGS -> "sibling of " + base;
      case SAME_SESSION -> "same session as " + base;
      case UNRELATED -> "unrelated to " + base;
    };
  }

  private static String relative(RunDiff.Relationship r, String base) {
    return switch (r) {
      case PARENT_CHILD -> "its parent " + base;
      case CHILD_PARENT -> "its child " + base;
      case SIBLINGS -> "its sibling " + base;
      case SAME_SESSION -> base + " of the same session";
      case UNRELATED -> base;
    };
  }

  private static String files(RunDiff.ArtifactDiff a) {
    int added = a.added().size();
    int removed = a.removed().size();
    int changed = a.changed().size();
    int kinds = (added > 0 ? 1 : 0) + (removed > 0 ? 1 : 0) + (changed > 0 ? 1 : 0);
    if (kinds == 0) {
      return null;
    }
    if (kinds == 1) {
      int n = added + removed + changed;
      String files = n + (n == 1 ? " file" : " files");
      String were = n == 1 ? " was " : " were ";
      return added > 0
          ? files + were + "added"
          : removed > 0 ? files + were + "removed" : files + " changed";
    }
    List<String> parts = new ArrayList<>();
    if (added > 0) {
      parts.add(added + " added");
    }
    if (removed > 0) {
      parts.add(removed + " removed");
    }
    if (changed > 0) {
      parts.add(changed + " changed");
    }
    return "files differ (" + String.join(", ", parts) + ")";
  }

  private static String outputs(RunDiff.OutputDiff o) {
    TreeSet<String> keys = new TreeSet<>(o.added());
    keys.addAll(o.removed());
    o.changed().forEach(c -> keys.add(c.key()));
    if (keys.isEmpty()) {
      return null;
    }
    List<String> named = new ArrayList<>();
    for (String key : keys) {
      if (named.size() == 3) {
        named.add("…");
        break;
      }
      named.add(clip(key, 30));
    }
    int n = keys.size();
    return "__outputs__ differ in "
        + n
        + (n == 1 ? " key (" : " keys (")
        + String.join(", ", named)
        + ")";
  }

  private static String environment(List<FieldChange> changes) {
    List<String> parts = new ArrayList<>();
    for (FieldChange c : changes) {
      switch (c.field()) {
        case "interpreter" -> parts.add("Python " + fromTo(c));
        case "env_hash" -> parts.add("installed packages");
        case "server_version" -> parts.add("server " + fromTo(c));
        case "backend" -> parts.add("backend " + fromTo(c));
        default -> {}
      }
    }
    return parts.isEmpty() ? null : "the environment differs (" + String.join(", ", parts) + ")";
  }

  private static String limits(List<FieldChange> changes) {
    List<String> parts = new ArrayList<>();
    for (FieldChange c : changes) {
      boolean limit = c.field().equals("timeout_seconds") || c.field().startsWith("limits.");
      if (limit && parts.size() == 3) {
        parts.add("…");
        break;
      }
      if (limit) {
        parts.add(clip(c.field().replaceFirst("^limits\\.", ""), 30) + " " + fromTo(c));
      }
    }
    return parts.isEmpty() ? null : "limits differ (" + String.join(", ", parts) + ")";
  }

  /** Said only when it moved by at least 100 ms and a fifth. */
  private static String duration(Long before, Long after) {
    if (before == null || after == null) {
      return null;
    }
    long change = Math.abs(after - before);
    if (change < 100 || change < Math.abs(before) / 5) {
      return null;
    }
    return "duration "
        + (after > before ? "rose" : "fell")
        + " from "
        + seconds(before)
        + " to "
        + seconds(after);
  }

  /** Said only when it moved by at least 16 MiB and a fifth. */
  private static String memory(Long before, Long after) {
    if (before == null || after == null) {
      return null;
    }
    long change = Math.abs(after - before);
    if (change < 16 * MIB || change < Math.abs(before) / 5) {
      return null;
    }
    return "peak memory "
        + (after > before ? "rose" : "fell")
        + " from "
        + before / MIB
        + " MiB to "
        + after / MIB
        + " MiB";
  }

  static String seconds(long ms) {
    if (Math.abs(ms) < 100) {
      return ms + " ms";
    }
    return Math.abs(ms) < 10_000
        ? String.format(Locale.ROOT, "%.1f s", ms / 1000.0)
        : String.format(Locale.ROOT, "%.0f s", ms / 1000.0);
  }

  private static String fromTo(FieldChange c) {
    return value(c.before()) + " → " + value(c.after());
  }

  private static String value(Object v) {
    return v == null ? "unknown" : clip(String.valueOf(v), 30);
  }

  private static String lines(int n) {
    return n + (n == 1 ? " line" : " lines");
  }

  private static void addIfPresent(List<String> clauses, String clause) {
    if (clause != null) {
      clauses.add(clause);
    }
  }

  /** "a", "a and b", "a, b and c". */
  private static String joinAnd(List<String> parts) {
    if (parts.size() == 1) {
      return parts.get(0);
    }
    return String.join(", ", parts.subList(0, parts.size() - 1))
        + " and "
        + parts.get(parts.size() - 1);
  }

  private static String clip(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max - 1) + "…";
  }
}

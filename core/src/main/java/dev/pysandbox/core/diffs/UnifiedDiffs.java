package dev.pysandbox.core.diffs;

import com.github.difflib.DiffUtils;
import com.github.difflib.UnifiedDiffUtils;
import com.github.difflib.algorithm.myers.MeyersDiff;
import com.github.difflib.algorithm.myers.MeyersDiffWithLinearSpace;
import com.github.difflib.patch.AbstractDelta;
import com.github.difflib.patch.ChangeDelta;
import com.github.difflib.patch.Chunk;
import com.github.difflib.patch.Patch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.BiPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Unified diffs of two texts, computed and written by java-diff-utils. Why a wrapper: the library
 * diffs lists of lines, so it cannot tell a last line without its newline from one with it; it
 * writes the start of an empty side unlike GNU {@code diff}; and it bounds neither its time nor its
 * memory. This class adds, around it:
 *
 * <ul>
 *   <li>a last line without a newline is followed by {@code \ No newline at end of file} (the
 *       marker is carried inside that line, so it also makes the line differ from the same text
 *       with a newline, as it does for GNU diff);
 *   <li>a hunk that is empty on one side starts at line 0 of that side ({@code @@ -0,0 +1,3 @@}),
 *       where the library writes 1;
 *   <li>the work is bounded: the plain Myers search keeps path nodes in proportion to the square of
 *       the differences, so past {@link #MYERS_COMPARISONS} line comparisons it gives way to the
 *       linear-space search, and past {@link #LINEAR_COMPARISONS} more (or over {@link #MAX_LINES}
 *       lines) the texts are shown as one hunk replacing the whole (still a correct diff, only not
 *       a minimal one);
 *   <li>the text is cut at a line end past a character cap, with a last line saying so.
 * </ul>
 */
final class UnifiedDiffs {
  static final int CONTEXT_LINES = 3;
  static final int MAX_LINES = 1_000_000;

  /** About 30 bytes of path nodes each, at worst: some 60 MB. */
  static final long MYERS_COMPARISONS = 2_000_000L;

  /** Under a second of work (about 0.6 s measured on the development machine). */
  static final long LINEAR_COMPARISONS = 20_000_000L;

  private static final String NO_NEWLINE = "\n\\ No newline at end of file";
  private static final Pattern HUNK_HEADER =
      Pattern.compile("^@@ -(\\d+),(\\d+) \\+(\\d+),(\\d+) @@$");

  private UnifiedDiffs() {}

  /**
   * One diff.
   *
   * @param text the unified diff, a newline after every line; empty when the texts are equal
   * @param linesAdded lines only the new text has
   * @param linesRemoved lines only the old text has
   * @param linesChanged per run of changed lines, the larger of its removed and added lines, summed
   */
  record TextDiff(String text, int linesAdded, int linesRemoved, int linesChanged) {
    static final TextDiff NONE = new TextDiff("", 0, 0, 0);
  }

  /**
   * The diff from {@code before} to {@code after} ({@code null} reads as empty), with 3 lines of
   * context, headed {@code --- beforeName} and {@code +++ afterName}, cut past {@code maxChars}.
   */
  static TextDiff diff(
      String before, String after, String beforeName, String afterName, int maxChars) {
    String from = before == null ? "" : before;
    String to = after == null ? "" : after;
    if (from.equals(to)) {
      return TextDiff.NONE;
    }
    List<String> fromLines = lines(from);
    List<String> toLines = lines(to);
    Patch<String> patch = patch(fromLines, toLines);
    List<String> unified =
        UnifiedDiffUtils.generateUnifiedDiff(
            beforeName, afterName, fromLines, patch, CONTEXT_LINES);
    int added = 0;
    int removed = 0;
    int changed = 0;
    for (AbstractDelta<String> delta : patch.getDeltas()) {
      added += delta.getTarget().size();
      removed += delta.getSource().size();
      changed += Math.max(delta.getTarget().size(), delta.getSource().size());
    }
    return new TextDiff(write(unified, maxChars), added, removed, changed);
  }

  /** The lines of {@code text} without their newlines; an unterminated last one carries a mark. */
  static List<String> lines(String text) {
    if (text.isEmpty()) {
      return List.of();
    }
    List<String> lines = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
    int last = lines.size() - 1;
    if (lines.get(last).isEmpty()) {
      lines.remove(last);
    } else {
      lines.set(last, lines.get(last) + NO_NEWLINE);
    }
    return lines;
  }

  /**
   * The deltas: Myers' algorithm while its memory stays small, then its linear-space form (slower,
   * memory in proportion to the input), then, past both budgets, one delta replacing the whole.
   */
  private static Patch<String> patch(List<String> from, List<String> to) {
    if (from.size() + to.size() <= MAX_LINES) {
      try {
        return DiffUtils.diff(
            from, to, new MeyersDiff<>(new BoundedEquals(MYERS_COMPARISONS)), null);
      } catch (TooMuchWork e) {
        // many differences: the plain search would keep too many path nodes
      }
      try {
        return joined(
            DiffUtils.diff(
                from,
                to,
                new MeyersDiffWithLinearSpace<>(new BoundedEquals(LINEAR_COMPARISONS)),
                null));
      } catch (TooMuchWork e) {
        // fall through: the texts differ too much for a minimal diff to be worth its cost
      }
    }
    Patch<String> whole = new Patch<>();
    whole.addDelta(new ChangeDelta<>(new Chunk<>(0, from), new Chunk<>(0, to)));
    return whole;
  }

  /**
   * The deltas with those that touch (no equal line between them, on either side) joined into one,
   * so a replaced line reads "-old" then "+new" as GNU diff writes it: the linear-space search can
   * give the insertion and the deletion as two deltas, the insertion first.
   */
  private static Patch<String> joined(Patch<String> patch) {
    Patch<String> out = new Patch<>();
    AbstractDelta<String> pending = null;
    for (AbstractDelta<String> next : patch.getDeltas()) {
      if (pending != null
          && end(pending.getSource()) == next.getSource().getPosition()
          && end(pending.getTarget()) == next.getTarget().getPosition()) {
        pending =
            new ChangeDelta<>(
                concat(pending.getSource(), next.getSource()),
                concat(pending.getTarget(), next.getTarget()));
      } else {
        if (pending != null) {
          out.addDelta(pending);
        }
        pending = next;
      }
    }
    if (pending != null) {
      out.addDelta(pending);
    }
    return out;
  }

  private static int end(Chunk<String> chunk) {
    return chunk.getPosition() + chunk.size();
  }

  private static Chunk<String> concat(Chunk<String> a, Chunk<String> b) {
    List<String> lines = new ArrayList<>(a.getLines());
    lines.addAll(b.getLines());
    return new Chunk<>(a.getPosition(), lines);
  }

  /**
   * The lines, each with its newline, while they fit in {@code maxChars} (with room for the note);
   * then, when some did not, a last line saying how much was left out.
   */
  private static String write(List<String> unified, int maxChars) {
    StringBuilder out = new StringBuilder();
    long total = 0;
    for (String line : unified) {
      total += line.length() + 1;
    }
    int room = total <= maxChars ? maxChars : Math.max(0, maxChars - 120);
    int shown = 0;
    for (String line : unified) {
      String fixed = line.startsWith("@@") ? hunkHeader(line) : line;
      if (out.length() + fixed.length() + 1 > room) {
        break;
      }
      out.append(fixed).append('\n');
      shown++;
    }
    if (shown < unified.size()) {
      out.append(
          String.format(
              Locale.ROOT,
              "[diff truncated: %d more lines (%d characters) not shown]\n",
              unified.size() - shown,
              total - out.length()));
    }
    return out.toString();
  }

  /** GNU diff's form for an empty side: the line before the hunk, 0 when at the top. */
  private static String hunkHeader(String line) {
    Matcher m = HUNK_HEADER.matcher(line);
    if (!m.matches()) {
      return line;
    }
    long fromStart = Long.parseLong(m.group(1));
    long fromCount = Long.parseLong(m.group(2));
    long toStart = Long.parseLong(m.group(3));
    long toCount = Long.parseLong(m.group(4));
    if (fromCount > 0 && toCount > 0) {
      return line;
    }
    return "@@ -"
        + (fromCount == 0 ? Math.max(0, fromStart - 1) : fromStart)
        + ","
        + fromCount
        + " +"
        + (toCount == 0 ? Math.max(0, toStart - 1) : toStart)
        + ","
        + toCount
        + " @@";
  }

  /** Line equality that gives up (by throwing) past a number of comparisons. */
  private static final class BoundedEquals implements BiPredicate<String, String> {
    private long left;

    BoundedEquals(long budget) {
      this.left = budget;
    }

    @Override
    public boolean test(String a, String b) {
      if (--left < 0) {
        throw new TooMuchWork();
      }
      return a.equals(b);
    }
  }

  private static final class TooMuchWork extends RuntimeException {
    TooMuchWork() {
      super("diff comparison budget spent", null, false, false);
    }
  }
}

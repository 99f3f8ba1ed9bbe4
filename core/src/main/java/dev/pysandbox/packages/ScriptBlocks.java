package dev.pysandbox.packages;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the blocks of PEP 723's reference regex, {@value #REFERENCE_REGEX}, with the result of
 * Python's {@code re.finditer} over text whose line endings are {@code \n}: a {@code # /// TYPE}
 * line, then the longest run of content lines ({@code #} alone or {@code # ...}, each ending in a
 * newline) that still leaves room for a closing {@code # ///} line, so the block ends at the last
 * {@code # ///} of the run; the next search starts after it.
 *
 * <p>Why not the regex itself: {@code java.util.regex} recurses once per repetition of the content
 * group and overflows the stack on a block of about a thousand lines. This walks the same grammar
 * in time linear in the text. {@code ScriptBlocksTest} checks it against the PEP's reference code
 * run by Python on many generated scripts.
 */
final class ScriptBlocks {
  static final String REFERENCE_REGEX =
      "(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\\s(?P<content>(^#(| .*)$\\s)+)^# ///$";

  private static final Pattern OPENER = Pattern.compile("# /// ([a-zA-Z0-9-]+)");

  /**
   * One match of the reference regex.
   *
   * @param type its {@code type} group
   * @param content its {@code content} group: the lines between opener and closer, each with its
   *     {@code \n}
   * @param openLine the opener's line, from 0
   * @param closeLine the closer's line, from 0
   */
  record Block(String type, String content, int openLine, int closeLine) {}

  /** An opener line ({@code # /// TYPE}) that starts no block and lies in none. */
  record Opener(String type, int line) {}

  /** The blocks in order, and the openers no block closed. */
  record Scan(List<Block> blocks, List<Opener> unclosed) {}

  private ScriptBlocks() {}

  /** Scans {@code text}, whose line endings must already be {@code \n}. */
  static Scan scan(String text) {
    String[] lines = text.split("\n", -1);
    int n = lines.length;
    // runEnd[k]: the last line of the run of content lines starting at k; -1 if k is not one.
    // A content line must end in "\n": every line but the last does.
    int[] runEnd = new int[n];
    for (int k = n - 1; k >= 0; k--) {
      boolean content = k < n - 1 && (lines[k].equals("#") || lines[k].startsWith("# "));
      runEnd[k] = !content ? -1 : (runEnd[k + 1] >= 0 ? runEnd[k + 1] : k);
    }
    // lastCloser[k]: the last "# ///" line at or before k; -1 if none.
    int[] lastCloser = new int[n];
    for (int k = 0; k < n; k++) {
      lastCloser[k] = lines[k].equals("# ///") ? k : (k > 0 ? lastCloser[k - 1] : -1);
    }
    List<Block> blocks = new ArrayList<>();
    List<Opener> unclosed = new ArrayList<>();
    int i = 0;
    while (i < n) {
      Matcher opener = OPENER.matcher(lines[i]);
      if (opener.matches()) {
        // The closer is the last "# ///" within the run or just after it (a closer on the last
        // line needs no newline), with at least one content line before it.
        int close = i + 1 < n && runEnd[i + 1] >= 0 ? lastCloser[runEnd[i + 1] + 1] : -1;
        if (close >= i + 2) {
          StringBuilder content = new StringBuilder();
          for (int k = i + 1; k < close; k++) {
            content.append(lines[k]).append('\n');
          }
          blocks.add(new Block(opener.group(1), content.toString(), i, close));
          i = close + 1;
          continue;
        }
        unclosed.add(new Opener(opener.group(1), i));
      }
      i++;
    }
    return new Scan(List.copyOf(blocks), List.copyOf(unclosed));
  }
}

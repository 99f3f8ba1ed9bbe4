package dev.pysandbox.packages;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import dev.pysandbox.api.PysandboxException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The PEP 723 inline metadata of a script: the {@code dependencies} and {@code requires-python} of
 * its {@code # /// script} block. The dependencies are returned as the script wrote them; pass them
 * through {@link Requirements#parse}, which refuses anything but index packages.
 *
 * <p>How the block is found follows the PEP's reference implementation: its regex (see {@code
 * ScriptBlocks}), other block types ignored, more than one {@code script} block refused, content
 * lines de-commented by dropping {@code "# "} or {@code "#"} after Python's {@code str.splitlines},
 * the result read as TOML. Two deliberate differences:
 *
 * <ul>
 *   <li>Line endings {@code \r\n} and {@code \r} are read as {@code \n} first, as Python does when
 *       it reads a script file in text mode (and as it compiles code), so a script saved with
 *       Windows line endings has its block found; the bare reference regex would miss it.
 *   <li>A {@code # /// script} line that opens no block (no closing {@code # ///}, or a line inside
 *       that does not start with {@code #}) is refused rather than ignored, so a typo does not turn
 *       into a run without its packages.
 * </ul>
 *
 * <p>Bounded: the first {@value #MAX_SCANNED_CHARS} characters of the code are scanned (up to the
 * last whole line in them); a block's content may be at most {@value #MAX_BLOCK_CHARS} characters,
 * its arrays and tables nested at most 32 deep.
 *
 * @param dependencies the {@code dependencies} array; empty when absent or when there is no block
 * @param requiresPython the {@code requires-python} string as written; {@code null} when absent
 */
public record ScriptMetadata(List<String> dependencies, String requiresPython) {
  /** How much of the code is scanned for a block. */
  public static final int MAX_SCANNED_CHARS = 1024 * 1024;

  /** The largest block content read. */
  public static final int MAX_BLOCK_CHARS = 64 * 1024;

  /** No metadata. */
  public static final ScriptMetadata NONE = new ScriptMetadata(List.of(), null);

  /** How deep arrays and tables may nest in a block (see {@link #nesting}). */
  private static final int MAX_NESTING = 32;

  private static final TomlMapper TOML = new TomlMapper();

  /**
   * Python's {@code str.splitlines} boundaries, each kept with the line before it ({@code \r} is
   * not among them: line endings are {@code \n} by then).
   */
  private static final Pattern PYTHON_LINE_END =
      Pattern.compile("(?<=[\\n\\x0B\\f\\x1C-\\x1E\\x85\\u2028\\u2029])");

  /** Copies {@code dependencies}. */
  public ScriptMetadata {
    dependencies = List.copyOf(dependencies);
  }

  /**
   * The {@code dependencies} of {@code code}'s {@code # /// script} block; see {@link #of}.
   *
   * @throws PysandboxException {@code invalid_argument} as {@link #of} says
   */
  public static List<String> dependencies(String code) {
    return of(code).dependencies();
  }

  /**
   * Reads {@code code}'s inline metadata.
   *
   * @param code Python source; {@code null} or empty for none
   * @return the metadata, or {@link #NONE} when there is no {@code # /// script} block
   * @throws PysandboxException {@code invalid_argument} for more than one {@code script} block, an
   *     opener without its block, a block over {@value #MAX_BLOCK_CHARS} characters or nested too
   *     deep, content that is not TOML, {@code dependencies} not an array of strings or {@code
   *     requires-python} not a string; the message says which line and why
   */
  public static ScriptMetadata of(String code) {
    if (code == null || code.isEmpty()) {
      return NONE;
    }
    ScriptBlocks.Scan scan = ScriptBlocks.scan(scanned(code));
    for (ScriptBlocks.Opener o : scan.unclosed()) {
      if (o.type().equals("script")) {
        throw PysandboxException.invalid(
            "script metadata: the '# /// script' at line "
                + (o.line() + 1)
                + " opens no block: a block ends with a '# ///' line, and every line up to it"
                + " starts with '#' (PEP 723)");
      }
    }
    List<ScriptBlocks.Block> scripts =
        scan.blocks().stream().filter(b -> b.type().equals("script")).toList();
    if (scripts.isEmpty()) {
      return NONE;
    }
    if (scripts.size() > 1) {
      throw PysandboxException.invalid(
          "script metadata: "
              + scripts.size()
              + " '# /// script' blocks (at lines "
              + scripts.stream().map(b -> String.valueOf(b.openLine() + 1)).toList()
              + "); PEP 723 allows one");
    }
    return read(scripts.get(0));
  }

  private static ScriptMetadata read(ScriptBlocks.Block block) {
    if (block.content().length() > MAX_BLOCK_CHARS) {
      throw malformed(
          block,
          "it is longer than "
              + MAX_BLOCK_CHARS
              + " characters ("
              + block.content().length()
              + ")");
    }
    StringBuilder decommented = new StringBuilder();
    for (String line : PYTHON_LINE_END.split(block.content())) {
      decommented.append(line.startsWith("# ") ? line.substring(2) : line.substring(1));
    }
    String toml = decommented.toString();
    if (nesting(toml) > MAX_NESTING) {
      throw malformed(block, "it nests arrays or tables more than " + MAX_NESTING + " deep");
    }
    JsonNode root;
    try {
      root = TOML.readTree(toml);
    } catch (JsonProcessingException e) {
      throw malformed(block, "it is not valid TOML: " + e.getOriginalMessage());
    }
    if (root == null || !root.isObject()) {
      return NONE;
    }
    List<String> dependencies = new ArrayList<>();
    JsonNode deps = root.get("dependencies");
    if (deps != null) {
      if (!deps.isArray()) {
        throw malformed(block, "'dependencies' is not an array of strings");
      }
      for (int i = 0; i < deps.size(); i++) {
        if (!deps.get(i).isTextual()) {
          throw malformed(block, "'dependencies' entry " + (i + 1) + " is not a string");
        }
        dependencies.add(deps.get(i).textValue());
      }
    }
    JsonNode python = root.get("requires-python");
    if (python != null && !python.isTextual()) {
      throw malformed(block, "'requires-python' is not a string");
    }
    return new ScriptMetadata(dependencies, python == null ? null : python.textValue());
  }

  /**
   * How deep arrays and tables nest in {@code toml}, strings and comments skipped as TOML reads
   * them. Why: Jackson's TOML parser recurses once per level and overflows the stack at a few
   * thousand, which 64 KiB of brackets reach.
   */
  static int nesting(CharSequence toml) {
    int depth = 0;
    int max = 0;
    int n = toml.length();
    int i = 0;
    while (i < n) {
      char c = toml.charAt(i);
      if (c == '#') {
        while (i < n && toml.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '"' || c == '\'') {
        boolean multiLine = run(toml, i, c) >= 3;
        i += multiLine ? 3 : 1;
        while (i < n) {
          char d = toml.charAt(i);
          if (d == c && (!multiLine || run(toml, i, c) >= 3)) {
            // A multi-line string's closing run may hold up to two quotes of its content.
            i += multiLine ? run(toml, i, c) : 1;
            break;
          }
          if (d == '\n' && !multiLine) {
            break; // not closed on its line: the parser says so
          }
          i += c == '"' && d == '\\' ? 2 : 1;
        }
      } else {
        if (c == '[' || c == '{') {
          max = Math.max(max, ++depth);
        } else if ((c == ']' || c == '}') && depth > 0) {
          depth--;
        }
        i++;
      }
    }
    return max;
  }

  /** How many {@code c} follow one another from {@code at}. */
  private static int run(CharSequence s, int at, char c) {
    int end = at;
    while (end < s.length() && s.charAt(end) == c) {
      end++;
    }
    return end - at;
  }

  /**
   * At most the first {@value #MAX_SCANNED_CHARS} characters, whole lines, endings as {@code \n}.
   */
  private static String scanned(String code) {
    boolean cut = code.length() > MAX_SCANNED_CHARS;
    String text =
        (cut ? code.substring(0, MAX_SCANNED_CHARS) : code)
            .replace("\r\n", "\n")
            .replace('\r', '\n');
    return cut ? text.substring(0, text.lastIndexOf('\n') + 1) : text;
  }

  private static PysandboxException malformed(ScriptBlocks.Block block, String why) {
    return PysandboxException.invalid(
        "script metadata (the '# /// script' block at line "
            + (block.openLine() + 1)
            + ") is malformed: "
            + why);
  }
}

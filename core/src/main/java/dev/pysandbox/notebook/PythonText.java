package dev.pysandbox.notebook;

import java.util.regex.Pattern;

/**
 * Text that goes into a generated Python file. Anything a caller or the sandbox chose enters the
 * file only through {@link #literal} or {@link #comment}, which leave no line break, control
 * character, line separator or lone surrogate in it: nothing in such text can end the string or the
 * comment, and nothing can shift the lines another reader counts (marimo splits the file with
 * {@code str.splitlines()}, which breaks at more characters than Python's tokenizer does).
 */
final class PythonText {
  /**
   * What makes code unfit for a cell function's body even when it compiled as a module: a star
   * import and a future import are refused inside a function, NUL cannot be in a source file, a
   * form feed in the indentation resets its column, and it and the other line breaks only {@code
   * str.splitlines()} sees shift marimo's line count. Found in the raw text (strings and comments
   * too), so a false alarm only keeps the code as text.
   */
  private static final Pattern UNFIT_FOR_A_CELL =
      Pattern.compile(
          "\\bimport[\\s\\\\]*\\*|\\bfrom[\\s\\\\]+__future__\\b"
              + "|[\\x00\\x0b\\x0c\\x1c-\\x1e\\x85\\u2028\\u2029]");

  /** {@code await}, {@code async for}, {@code async with}: the cell must be {@code async def}. */
  private static final Pattern ASYNC = Pattern.compile("\\b(await|async)\\b");

  private static final String INDENT = "    ";

  private PythonText() {}

  /** A double-quoted Python string literal whose value is {@code text}. */
  static String literal(String text) {
    StringBuilder b = new StringBuilder(text.length() + 2).append('"');
    escape(text, b, true);
    return b.append('"').toString();
  }

  /** A one-line comment saying {@code text} ({@code "# "} included), line breaks escaped. */
  static String comment(String text) {
    StringBuilder b = new StringBuilder(text.length() + 2).append("# ");
    escape(text, b, false);
    return b.toString();
  }

  /**
   * {@code code} as a function body: line breaks made {@code \n} (as Python's tokenizer reads
   * them), every non-empty line indented by exactly four spaces, whitespace-only lines too, so that
   * removing four spaces gives the code back.
   */
  static String indent(String code) {
    String text = code.replace("\r\n", "\n").replace('\r', '\n');
    if (text.endsWith("\n")) {
      text = text.substring(0, text.length() - 1);
    }
    if (text.isEmpty()) {
      return "";
    }
    StringBuilder b = new StringBuilder(text.length() + 64);
    for (String line : text.split("\n", -1)) {
      b.append(line.isEmpty() ? "" : INDENT).append(line).append('\n');
    }
    return b.toString();
  }

  /** True when code that compiled as a module may still not compile as a function's body. */
  static boolean unfitForCell(String code) {
    return UNFIT_FOR_A_CELL.matcher(code).find() || hasLoneSurrogate(code);
  }

  /** True when the cell must be {@code async def} (top-level {@code await} compiles only there). */
  static boolean needsAsync(String code) {
    return ASYNC.matcher(code).find();
  }

  private static boolean hasLoneSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return true;
      }
    }
    return false;
  }

  private static void escape(String text, StringBuilder b, boolean quotes) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        b.append(c).append(text.charAt(++i));
      } else if (c == '\\') {
        b.append("\\\\");
      } else if (c == '"' && quotes) {
        b.append("\\\"");
      } else if (c == '\n') {
        b.append("\\n");
      } else if (c == '\r') {
        b.append("\\r");
      } else if (c == '\t') {
        b.append("\\t");
      } else if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
        b.append(String.format("\\x%02x", (int) c));
      } else if (c == '\u2028' || c == '\u2029' || Character.isSurrogate(c)) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
  }
}

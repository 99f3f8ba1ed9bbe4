package dev.pysandbox.util;

/**
 * Text a person reads before deciding (code held for approval, a sandbox's output, file names) made
 * to show what is there: control characters other than newline and tab — escape sequences that
 * rewrite a terminal, set its title or write the clipboard (OSC 52) — become {@code \x1b}-style
 * text instead of being obeyed, and invisible format characters — bidirectional overrides and
 * isolates that make code read differently from how it runs ("Trojan Source"), zero-width
 * characters — and the line and paragraph separators become {@code \\u202e}-style text. One rule
 * for every face that shows such text to a person (the command line, the MCP approval prompt); the
 * record keeps the characters, and JSON answers carry them exactly.
 */
public final class ShownText {
  private ShownText() {}

  /** {@code text} with every control and invisible format character shown as an escape. */
  public static String escape(String text) {
    if (text == null) {
      return null;
    }
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean control = (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c <= 0x9f);
      boolean invisible = !control && invisible(c);
      if ((control || invisible) && out == null) {
        out = new StringBuilder(text.length() + 16).append(text, 0, i);
      }
      if (out != null) {
        if (control) {
          out.append(String.format("\\x%02x", (int) c));
        } else if (invisible) {
          out.append(String.format("\\u%04x", (int) c));
        } else {
          out.append(c);
        }
      }
    }
    return out == null ? text : out.toString();
  }

  /**
   * Whether {@code c} is shown as nothing though it changes what is shown: a format character
   * (bidirectional controls, zero-width characters, the byte-order mark) or a line or paragraph
   * separator.
   */
  public static boolean invisible(int c) {
    return Character.getType(c) == Character.FORMAT || c == '\u2028' || c == '\u2029';
  }
}

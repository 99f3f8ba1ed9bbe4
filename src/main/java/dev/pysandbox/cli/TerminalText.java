package dev.pysandbox.cli;

/**
 * Text from a sandbox (its output, its errors, file names) made safe to print on a terminal:
 * control characters other than newline and tab — escape sequences that rewrite the screen, set the
 * window title or write the clipboard (OSC 52) — are shown as {@code \x1b}-style text instead of
 * being obeyed. Invisible format characters — bidirectional overrides and isolates that make code
 * read differently from how it runs ("Trojan Source"), zero-width characters — and the line and
 * paragraph separators are shown as {@code \\u202e}-style text. The record keeps the bytes; {@code
 * --json} prints them exactly.
 */
final class TerminalText {
  private TerminalText() {}

  /** True when the command's stdout goes to a terminal (stdin too: Java cannot tell them apart). */
  static boolean interactive() {
    return System.console() != null;
  }

  static String escape(String text) {
    if (text == null) {
      return null;
    }
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean control = (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c <= 0x9f);
      boolean invisible =
          !control
              && (Character.getType(c) == Character.FORMAT
                  || c == '\u2028'
                  || c == '\u2029'
                  || c == '\ufeff');
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
}

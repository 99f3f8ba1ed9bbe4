package dev.pysandbox.cli;

import dev.pysandbox.util.ShownText;

/**
 * Text from a sandbox (its output, its errors, file names) made safe to print on a terminal:
 * control characters other than newline and tab — escape sequences that rewrite the screen, set the
 * window title or write the clipboard (OSC 52) — are shown as {@code \x1b}-style text instead of
 * being obeyed. Invisible format characters — bidirectional overrides and isolates that make code
 * read differently from how it runs ("Trojan Source"), zero-width characters — and the line and
 * paragraph separators are shown as {@code \\u202e}-style text ({@link ShownText}, which the MCP
 * approval prompt uses too). The record keeps the bytes; {@code --json} prints them exactly.
 */
final class TerminalText {
  private TerminalText() {}

  /** True when the command's stdout goes to a terminal (stdin too: Java cannot tell them apart). */
  static boolean interactive() {
    return System.console() != null;
  }

  static String escape(String text) {
    return ShownText.escape(text);
  }
}

package dev.pysandbox.packages;

import java.util.List;

/**
 * Where a hand-written parser of this package is in the text it reads (a requirement, a marker),
 * with the steps both grammars take: skip spaces, look at the next character, take an expected
 * character, a run of allowed ones, or the first of some operators. Written once so that both
 * parsers move through their text the same way.
 */
abstract class TextCursor {
  /** What one character may be, for {@link #takeWhile}. */
  @FunctionalInterface
  interface CharTest {
    boolean test(char c);
  }

  final String text;
  int pos;

  TextCursor(String text) {
    this.text = text;
  }

  final void spaces() {
    while (pos < text.length() && text.charAt(pos) == ' ') {
      pos++;
    }
  }

  /** The next character, or {@code '\0'} at the end. */
  final char peek() {
    return pos < text.length() ? text.charAt(pos) : '\0';
  }

  /** Consumes {@code c} when it is next. */
  final boolean consume(char c) {
    if (peek() == c && pos < text.length()) {
      pos++;
      return true;
    }
    return false;
  }

  /** Consumes the run of characters {@code allowed} accepts from here (maybe none); returns it. */
  final String takeWhile(CharTest allowed) {
    int start = pos;
    while (pos < text.length() && allowed.test(text.charAt(pos))) {
      pos++;
    }
    return text.substring(start, pos);
  }

  /**
   * Consumes the first of {@code tokens} the text goes on with (so list the longest first: {@code
   * ===} before {@code ==}), or consumes nothing and returns {@code null}.
   */
  final String takeFirstOf(List<String> tokens) {
    for (String t : tokens) {
      if (text.startsWith(t, pos)) {
        pos += t.length();
        return t;
      }
    }
    return null;
  }
}

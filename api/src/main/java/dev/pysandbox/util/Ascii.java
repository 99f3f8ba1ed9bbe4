package dev.pysandbox.util;

/**
 * Character classes of plain ASCII, for hand-written checks of ids, keys and encodings that must
 * not accept what {@link Character#isLetterOrDigit} would (letters and digits of every script).
 */
public final class Ascii {
  private Ascii() {}

  /** Whether {@code c} is one of {@code A-Z}, {@code a-z} or {@code 0-9}. */
  public static boolean isLetterOrDigit(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  }
}

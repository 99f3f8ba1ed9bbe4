package dev.pysandbox.config;

/**
 * A range of host user ids, both ends included ({@code sandbox_uid_range}). Each id is used as both
 * uid and gid.
 *
 * @param first the lowest id, at least {@link #MIN}
 * @param last the highest id, at most {@link #MAX}
 */
public record UidRange(int first, int last) {
  /** System accounts live below 1000 on every common distribution. */
  public static final int MIN = 1000;

  /** Below 2^31 - 1, so that the id is a positive Java int and never the 32-bit -1. */
  public static final int MAX = Integer.MAX_VALUE - 1;

  public UidRange {
    if (first < MIN || last > MAX || first > last) {
      throw new IllegalArgumentException(
          "a range of ids from " + MIN + " to " + MAX + " is expected: " + first + "-" + last);
    }
  }

  /**
   * Parses {@code FIRST-LAST}.
   *
   * @throws IllegalArgumentException saying what is wrong
   */
  public static UidRange parse(String text) {
    String t = text.trim().replace("_", "");
    int dash = t.indexOf('-');
    if (dash <= 0 || dash == t.length() - 1) {
      throw new IllegalArgumentException("expected FIRST-LAST, e.g. 2000000000-2000065535");
    }
    long first;
    long last;
    try {
      first = Long.parseLong(t.substring(0, dash));
      last = Long.parseLong(t.substring(dash + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("expected FIRST-LAST, e.g. 2000000000-2000065535");
    }
    if (first > last) {
      throw new IllegalArgumentException("the first id is above the last");
    }
    if (first < MIN) {
      throw new IllegalArgumentException(
          "it must not include root or system accounts (ids below " + MIN + ")");
    }
    if (last > MAX) {
      throw new IllegalArgumentException("ids above " + MAX + " are not supported");
    }
    if (first <= 65535 && last >= 65534) {
      throw new IllegalArgumentException("it must not include nobody (65534) or 65535");
    }
    return new UidRange((int) first, (int) last);
  }

  /** How many ids it holds. */
  public long size() {
    return (long) last - first + 1;
  }

  /** True when the two ranges share an id. */
  public boolean overlaps(long otherFirst, long otherLast) {
    return otherFirst <= last && otherLast >= first;
  }

  @Override
  public String toString() {
    return first + "-" + last;
  }
}

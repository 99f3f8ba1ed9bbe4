package dev.pysandbox.api;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one rule for a "since" argument ({@code list_security_events}, {@code pysandbox logs}): an
 * age back from now ({@code 30s}, {@code 10m}, {@code 2h}, {@code 7d}, or ISO-8601 {@code PT1H30M})
 * or an ISO-8601 instant ({@code 2026-11-25T15:00:00Z}).
 */
public final class Since {
  private static final Pattern AGE = Pattern.compile("(\\d{1,9})([smhd])");

  private Since() {}

  /**
   * The instant {@code value} names at {@code now}; {@code null} for an age reaching back before
   * 1970 (everything).
   *
   * @param what the argument's name, for the message ({@code since}, {@code --since})
   * @throws PysandboxException {@code invalid_argument} for neither an age nor an instant
   */
  public static Instant at(String value, Instant now, String what) {
    Object s = parse(value, what);
    if (s instanceof Instant at) {
      return at;
    }
    try {
      Instant at = now.minus((Duration) s);
      return at.isBefore(Instant.EPOCH) ? null : at;
    } catch (DateTimeException | ArithmeticException e) {
      return null;
    }
  }

  /** Checks {@code value} without a clock; see {@link #at}. */
  public static void check(String value, String what) {
    parse(value, what);
  }

  /** An age as a {@link Duration} (not negative) or an instant. */
  private static Object parse(String value, String what) {
    Matcher m = AGE.matcher(value);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    try {
      if (value.startsWith("P")) {
        Duration d = Duration.parse(value);
        if (!d.isNegative()) {
          return d;
        }
      } else {
        return Instant.parse(value);
      }
    } catch (DateTimeParseException e) {
      // said below
    }
    throw PysandboxException.invalid(
        what
            + " "
            + PysandboxException.quote(value)
            + " is neither an age (30s, 10m, 2h, 7d, PT1H30M) nor an instant"
            + " (2026-11-25T15:00:00Z)");
  }
}

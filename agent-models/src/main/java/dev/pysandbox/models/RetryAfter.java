package dev.pysandbox.models;

import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/** Reads a Retry-After header (RFC 9110, 10.2.3): delay-seconds or an HTTP date. */
final class RetryAfter {
  private RetryAfter() {}

  /** The wait the header asks for: null when absent or unreadable, zero for a date already past. */
  static Duration parse(String value, Clock clock) {
    if (value == null || value.isBlank()) {
      return null;
    }
    String v = value.strip();
    if (v.chars().allMatch(Character::isDigit)) {
      try {
        return Duration.ofSeconds(Long.parseLong(v));
      } catch (NumberFormatException e) {
        return null; // more digits than a long: no sensible wait
      }
    }
    try {
      ZonedDateTime at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME);
      Duration wait = Duration.between(clock.instant(), at.toInstant());
      return wait.isNegative() ? Duration.ZERO : wait;
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}

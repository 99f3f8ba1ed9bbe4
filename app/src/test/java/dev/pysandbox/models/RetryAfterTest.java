package dev.pysandbox.models;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** Retry-After as seconds or as an HTTP date, on a fixed clock. */
@Fast
class RetryAfterTest {
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-11-29T10:00:00Z"), ZoneOffset.UTC);

  @Test
  void parse_seconds() {
    assertThat(RetryAfter.parse("12", CLOCK)).isEqualTo(Duration.ofSeconds(12));
    assertThat(RetryAfter.parse(" 0 ", CLOCK)).isEqualTo(Duration.ZERO);
  }

  @Test
  void parse_httpDate_isTheWaitUntilThen() {
    assertThat(RetryAfter.parse("Sun, 29 Nov 2026 10:01:30 GMT", CLOCK))
        .isEqualTo(Duration.ofSeconds(90));
  }

  @Test
  void parse_httpDateInThePast_isZero() {
    assertThat(RetryAfter.parse("Sun, 29 Nov 2026 09:00:00 GMT", CLOCK)).isEqualTo(Duration.ZERO);
  }

  @Test
  void parse_absentOrUnreadable_isNull() {
    assertThat(RetryAfter.parse(null, CLOCK)).isNull();
    assertThat(RetryAfter.parse("", CLOCK)).isNull();
    assertThat(RetryAfter.parse("soon", CLOCK)).isNull();
    assertThat(RetryAfter.parse("-5", CLOCK)).isNull();
    assertThat(RetryAfter.parse("99999999999999999999999", CLOCK)).isNull();
  }
}

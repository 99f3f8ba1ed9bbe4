package dev.pysandbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.ManualTime;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The token buckets on their own, on time the test moves. */
@Fast
class RateLimiterTest {
  private final ManualTime time = ManualTime.frozen(Instant.parse("2026-01-01T00:00:00Z"));

  @Test
  void eachCaller_hasItsOwnBucket_refilledWithTime() {
    RateLimiter limiter = new RateLimiter(2, 3, time);
    for (int i = 0; i < 3; i++) {
      assertThat(limiter.acquire("key a")).isZero();
    }
    assertThat(limiter.acquire("key a")).isEqualTo(500_000_000L);
    assertThat(limiter.acquire("key b")).as("another key").isZero();
    time.advance(Duration.ofMillis(500));
    assertThat(limiter.acquire("key a")).isZero();
  }

  /** The table of callers is bounded: many addresses or keys never grow it past its size. */
  @Test
  void manyCallers_areForgottenLeastRecentlySeenFirst_withinTheBound() {
    RateLimiter limiter = new RateLimiter(1, 1, time, 100);
    assertThat(limiter.acquire("key busy")).isZero();
    for (int i = 0; i < 10_000; i++) {
      limiter.acquire(RateLimiter.forAddress("10.0." + (i >> 8) + "." + (i & 255)));
      if (i % 50 == 0) {
        assertThat(limiter.acquire("key busy")).as("still remembered, still empty").isPositive();
      }
    }
    assertThat(limiter.size()).isEqualTo(100);
  }

  @Test
  void anIpv6Client_isOneCallerPerSlash64() {
    assertThat(RateLimiter.forAddress("2001:db8::1"))
        .isEqualTo(RateLimiter.forAddress("2001:db8:0:0:ffff:1:2:3"))
        .isEqualTo("address 2001:db8:0:0::/64")
        .isNotEqualTo(RateLimiter.forAddress("2001:db8:0:1::1"));
    assertThat(RateLimiter.forAddress("127.0.0.1")).isEqualTo("address 127.0.0.1");
    assertThat(RateLimiter.forKey("key_1")).isEqualTo("key key_1");
  }

  @Test
  void noLimit_takesNoToken_andRemembersNoOne() {
    RateLimiter limiter = new RateLimiter(0, 1, time);
    for (int i = 0; i < 100; i++) {
      assertThat(limiter.acquire("address " + i)).isZero();
    }
    assertThat(limiter.size()).isZero();
  }
}

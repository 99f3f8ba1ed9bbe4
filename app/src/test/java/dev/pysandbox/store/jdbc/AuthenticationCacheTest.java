package dev.pysandbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.ManualTime;
import dev.pysandbox.api.ApiPrincipal;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

@Fast
class AuthenticationCacheTest {
  private static final long TTL = Duration.ofSeconds(1).toNanos();
  private final ManualTime time = new ManualTime();

  @Test
  void anAnswer_isFreshUntilItsTimeToLiveAfterTheRead() {
    AuthenticationCache cache = new AuthenticationCache(time, TTL, 10);
    long readStarted = time.nanoTime();
    time.advance(Duration.ofMillis(300)); // a slow read
    cache.put("h", Optional.of(new ApiPrincipal("key_1", "acme")), readStarted);
    time.advance(Duration.ofMillis(699));
    assertThat(cache.fresh("h").principal()).contains(new ApiPrincipal("key_1", "acme"));
    time.advance(Duration.ofMillis(1));
    assertThat(cache.fresh("h")).isNull();
  }

  @Test
  void whenFull_expiredAnswersAreDropped_andWithoutRoomANewOneIsNotKept() {
    AuthenticationCache cache = new AuthenticationCache(time, TTL, 3);
    for (int i = 0; i < 3; i++) {
      cache.put("old" + i, Optional.empty(), time.nanoTime());
    }
    cache.put("no-room", Optional.empty(), time.nanoTime());
    assertThat(cache.size()).isEqualTo(3);
    assertThat(cache.fresh("no-room")).isNull();

    time.advance(Duration.ofSeconds(1));
    cache.put("new", Optional.empty(), time.nanoTime());
    assertThat(cache.size()).isEqualTo(1);
    assertThat(cache.fresh("new")).isNotNull();
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import dev.pysandbox.ManualTime;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.core.host.StoreHandle;
import dev.pysandbox.store.RunStore;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The store's re-opening after a failure waits out its back-off on the core's time source. */
@Fast
class StoreHandleTest {
  private final ManualTime time = new ManualTime();
  private final AtomicInteger opens = new AtomicInteger();
  private final RunStore store =
      (RunStore)
          Proxy.newProxyInstance(
              RunStore.class.getClassLoader(), new Class<?>[] {RunStore.class}, (p, m, a) -> null);

  private StoreHandle handle(int failures) {
    return new StoreHandle(
        () -> {
          if (opens.incrementAndGet() <= failures) {
            throw new PysandboxException(ErrorCode.STORE_UNAVAILABLE, "disk gone");
          }
          return store;
        },
        Runnable::run,
        time);
  }

  @Test
  void aFailedOpening_isRetriedOnlyAfterTheBackOff_asTheTimeSourceCountsIt() {
    StoreHandle h = handle(1);
    assertThatThrownBy(h::get).hasMessageContaining("disk gone");
    time.advance(Duration.ofMillis(1900));
    assertThatThrownBy(h::get)
        .as("within the back-off: the same failure")
        .hasMessageContaining("disk gone");
    assertThat(opens).as("not opened again within the back-off").hasValue(1);
    time.advance(Duration.ofMillis(200));
    assertThat(h.get()).isSameAs(store);
    assertThat(opens).hasValue(2);
  }

  @Test
  void aStoreThatKeepsFailing_isTriedOncePerBackOff() {
    StoreHandle h = handle(Integer.MAX_VALUE);
    for (int i = 0; i < 5; i++) {
      assertThatThrownBy(h::get).isInstanceOf(PysandboxException.class);
      assertThatThrownBy(h::get).isInstanceOf(PysandboxException.class);
      time.advance(Duration.ofSeconds(3));
    }
    assertThat(opens).hasValue(5);
  }
}

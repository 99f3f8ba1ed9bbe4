package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.ManualTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The replay buffer of one MCP session holds its bounds however many events come and however long
 * the client stays away, and never resumes across a gap.
 */
@Fast
class ReplayBufferTest {
  private final ManualTime time = new ManualTime();
  private final ReplayBuffer.Budget all = new ReplayBuffer.Budget(1_000_000);

  private static byte[] frame(int n) {
    return ("e" + n).repeat(10).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void manyEvents_keepOnlyTheNewest_withinTheCountBound() {
    ReplayBuffer b = new ReplayBuffer(100, 1 << 20, 60_000, all, time);
    for (int i = 1; i <= 10_000; i++) {
      b.add(1, i, frame(i));
    }
    assertThat(b.size()).isEqualTo(100);
    assertThat(b.after(1, 9_900)).hasSize(100);
    assertThat(b.after(1, 9_950)).hasSize(50);
    assertThat(b.after(1, 9_899)).as("event 9,900 was dropped: no resume across the gap").isNull();
  }

  @Test
  void bigEvents_keepOnlyWhatFitsTheByteBound_andOneTooBigIsNotKept() {
    ReplayBuffer b = new ReplayBuffer(1_000, 1_000, 60_000, all, time);
    for (int i = 1; i <= 50; i++) {
      b.add(1, i, new byte[300]);
    }
    assertThat(b.bytes()).isLessThanOrEqualTo(1_000);
    assertThat(b.size()).isEqualTo(3);
    b.add(2, 1, new byte[1_001]);
    assertThat(b.after(2, 0)).as("a frame over the bound alone is lost, not kept").isNull();
    assertThat(b.bytes()).isLessThanOrEqualTo(1_000);
  }

  @Test
  void aClientThatNeverComesBack_costsNothingOnceTheAgeBoundPassed() {
    ReplayBuffer b = new ReplayBuffer(1_000, 1 << 20, 60_000, all, time);
    for (int i = 1; i <= 500; i++) {
      b.add(i % 7, i, frame(i));
    }
    assertThat(all.used()).isPositive();
    time.advance(Duration.ofSeconds(61));
    b.expire();
    assertThat(b.size()).isZero();
    assertThat(b.bytes()).isZero();
    assertThat(all.used()).isZero();
    assertThat(b.after(3, 0)).isNull();
  }

  @Test
  void theSharedBudget_boundsEverySessionTogether() {
    ReplayBuffer.Budget small = new ReplayBuffer.Budget(1_000);
    ReplayBuffer one = new ReplayBuffer(1_000, 1 << 20, 60_000, small, time);
    ReplayBuffer two = new ReplayBuffer(1_000, 1 << 20, 60_000, small, time);
    for (int i = 1; i <= 20; i++) {
      one.add(1, i, new byte[100]);
      two.add(1, i, new byte[100]);
    }
    assertThat(small.used()).isLessThanOrEqualTo(1_000);
    assertThat(one.bytes() + two.bytes()).isEqualTo(small.used());
    one.clear();
    two.clear();
    assertThat(small.used()).isZero();
  }

  @Test
  void eachStreamReplaysOnlyItsOwnEvents_inOrder() {
    ReplayBuffer b = new ReplayBuffer(1_000, 1 << 20, 60_000, all, time);
    b.add(1, 1, "a1".getBytes(StandardCharsets.UTF_8));
    b.add(2, 1, "b1".getBytes(StandardCharsets.UTF_8));
    b.add(1, 2, "a2".getBytes(StandardCharsets.UTF_8));
    List<byte[]> one = b.after(1, 0);
    assertThat(one)
        .extracting(f -> new String(f, StandardCharsets.UTF_8))
        .containsExactly("a1", "a2");
    assertThat(b.after(2, 1)).isEmpty();
    b.forget(1);
    assertThat(b.holds(1)).isFalse();
    assertThat(b.holds(2)).isTrue();
  }
}

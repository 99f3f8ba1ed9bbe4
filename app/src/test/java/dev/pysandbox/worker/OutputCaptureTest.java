package dev.pysandbox.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

@Fast
class OutputCaptureTest {
  private static ByteBuffer bytes(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void smallOutput_isKeptWhole() {
    OutputCapture c = new OutputCapture(1024);
    c.append(bytes("hello "));
    c.append(bytes("world\n"));
    assertThat(c.snapshot()).isEqualTo(new CapturedText("hello world\n", false, 12));
  }

  @Test
  void outputOverTheCap_keepsHeadAndTail_andCountsAll() {
    OutputCapture c = new OutputCapture(1024);
    c.append(bytes("START"));
    for (int i = 0; i < 10_000; i++) {
      c.append(bytes("0123456789"));
    }
    c.append(bytes("END"));
    CapturedText t = c.snapshot();
    assertThat(t.truncated()).isTrue();
    assertThat(t.totalBytes()).isEqualTo(5 + 100_000 + 3);
    assertThat(t.text()).startsWith("START0123").endsWith("789END").contains("bytes omitted");
    assertThat(t.text().length()).isLessThan(1024 + 200);
  }

  @Test
  void oneHugeChunk_isCutToTheTail() {
    OutputCapture c = new OutputCapture(100);
    c.append(bytes("a".repeat(1_000_000) + "TAIL"));
    CapturedText t = c.snapshot();
    assertThat(t.text()).startsWith("a".repeat(50)).endsWith("TAIL");
    assertThat(t.totalBytes()).isEqualTo(1_000_004);
  }

  @Test
  void tailRing_wrapsAroundInOrder() {
    OutputCapture c = new OutputCapture(20);
    c.append(bytes("0123456789"));
    for (char ch = 'a'; ch <= 'z'; ch++) {
      c.append(bytes(String.valueOf(ch)));
    }
    CapturedText t = c.snapshot();
    assertThat(t.text()).startsWith("0123456789").endsWith("qrstuvwxyz");
  }
}

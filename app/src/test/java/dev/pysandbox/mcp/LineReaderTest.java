package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Bounded lines: what the stdio transport reads a client's messages with. */
@Fast
class LineReaderTest {
  private static List<LineReader.Line> read(String input, int max) throws IOException {
    LineReader r =
        new LineReader(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), max);
    List<LineReader.Line> out = new ArrayList<>();
    LineReader.Line l;
    while ((l = r.next()) != null) {
      out.add(l);
    }
    return out;
  }

  private static String text(LineReader.Line l) {
    return new String(l.bytes(), 0, l.length(), StandardCharsets.UTF_8);
  }

  @Test
  void lines_endWithNewlineOrCrLf_andTheLastNeedsNoNewline() throws IOException {
    List<LineReader.Line> lines = read("a\r\nbc\n\nlast", 100);
    assertThat(lines).extracting(LineReaderTest::text).containsExactly("a", "bc", "", "last");
    assertThat(lines).noneMatch(LineReader.Line::oversized);
  }

  @Test
  void overLongLine_keepsOnlyItsHead_countsItAll_andTheNextLineIsWhole() throws IOException {
    String huge = "{\"id\":7," + "x".repeat(300_000) + "}";
    List<LineReader.Line> lines = read(huge + "\n{\"next\":1}\n", 1000);
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0).oversized()).isTrue();
    assertThat(lines.get(0).totalBytes()).isEqualTo(huge.length());
    assertThat(lines.get(0).length()).isLessThanOrEqualTo(LineReader.OVERSIZED_HEAD_BYTES);
    assertThat(text(lines.get(0))).startsWith("{\"id\":7,");
    assertThat(text(lines.get(1))).isEqualTo("{\"next\":1}");
  }

  @Test
  void lineOfExactlyTheLimit_isWhole() throws IOException {
    String line = "y".repeat(4096);
    List<LineReader.Line> lines = read(line + "\n", 4096);
    assertThat(lines.get(0).oversized()).isFalse();
    assertThat(text(lines.get(0))).isEqualTo(line);
  }
}

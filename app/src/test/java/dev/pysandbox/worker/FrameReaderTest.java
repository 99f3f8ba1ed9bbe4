package dev.pysandbox.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The control stream's splitter: prefixes decide, unwanted lines are never kept. */
@Fast
class FrameReaderTest {
  private static final String ID = "r0123456789abcdef";
  private static final String DONE = "{\"id\":\"" + ID + "\",\"type\":\"done\",\"status\":\"ok\"}";

  /** Wants done frames of {@link #ID} up to {@code limit} bytes; records everything. */
  private static final class Recorder implements FrameReader.Sink {
    final long limit;
    final List<String> frames = new ArrayList<>();
    final List<String> events = new ArrayList<>();
    long ignored;

    Recorder(long limit) {
      this.limit = limit;
    }

    @Override
    public FrameReader.Kind classify(byte[] prefix, int length) {
      String p = new String(prefix, 0, length, StandardCharsets.US_ASCII);
      return p.startsWith("{\"id\":\"" + ID + "\",\"type\":\"done\"")
          ? FrameReader.Kind.DONE
          : FrameReader.Kind.OTHER;
    }

    @Override
    public long limit(FrameReader.Kind kind) {
      return kind == FrameReader.Kind.DONE ? limit : 0;
    }

    @Override
    public boolean frame(FrameReader.Kind kind, byte[] bytes, int length) {
      frames.add(new String(bytes, 0, length, StandardCharsets.US_ASCII));
      return false;
    }

    @Override
    public boolean largeFrame(FrameReader.Kind kind, List<byte[]> chunks, long size) {
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      chunks.forEach(all::writeBytes);
      assertThat(all.size()).isEqualTo(size);
      frames.add(all.toString(StandardCharsets.US_ASCII));
      events.add("large");
      return true;
    }

    @Override
    public boolean tooLong(FrameReader.Kind kind, long limit) {
      events.add("tooLong " + kind);
      return false;
    }

    @Override
    public boolean ignored(int bytes, boolean end) {
      ignored += bytes;
      if (end) {
        events.add("ignored line");
      }
      return false;
    }
  }

  private static void feedInPieces(FrameReader reader, byte[] bytes, int piece) {
    for (int at = 0; at < bytes.length; at += piece) {
      ByteBuffer b = ByteBuffer.wrap(bytes, at, Math.min(piece, bytes.length - at));
      while (b.hasRemaining()) {
        reader.feed(b);
      }
    }
  }

  @Test
  void framesSplitAnywhere_areReassembled_andGarbageLinesAreOnlyCounted() {
    String stream = "\n" + DONE + "\ngarbage {\"type\":\"done\"}\n\n" + DONE + "\n";
    byte[] bytes = stream.getBytes(StandardCharsets.US_ASCII);
    for (int piece = 1; piece <= bytes.length; piece++) {
      Recorder r = new Recorder(1 << 20);
      feedInPieces(new FrameReader(r), bytes, piece);
      assertThat(r.frames).as("pieces of %d", piece).containsExactly(DONE, DONE);
      assertThat(r.events).containsExactly("ignored line");
      assertThat(r.ignored).isEqualTo("garbage {\"type\":\"done\"}".length());
    }
  }

  @Test
  void kindOf_tellsTheRequestsFramesApart_byTheirPrefixAlone() {
    byte[] prefix = FrameReader.requestPrefix(ID);
    for (var c :
        List.of(
            new Object[] {"done", FrameReader.Kind.DONE},
            new Object[] {"display", FrameReader.Kind.DISPLAY},
            new Object[] {"subcall", FrameReader.Kind.SUBCALL},
            new Object[] {"subcalls", FrameReader.Kind.OTHER},
            new Object[] {"ready", FrameReader.Kind.OTHER})) {
      byte[] line =
          ("{\"id\":\"" + ID + "\",\"type\":\"" + c[0] + "\",\"qid\":1}")
              .getBytes(StandardCharsets.US_ASCII);
      int n = Math.min(line.length, FrameReader.PREFIX_BYTES);
      assertThat(FrameReader.kindOf(line, n, false, prefix)).as("%s", c[0]).isEqualTo(c[1]);
      // A frame of no request in flight is nothing wanted.
      assertThat(FrameReader.kindOf(line, n, false, null)).isEqualTo(FrameReader.Kind.OTHER);
    }
  }

  @Test
  void utf8Length_countsWhatTheRunnerCounts() {
    assertThat(Subcalls.utf8Length("a\u00e9\u2713\ud834\udd1e")).isEqualTo(1 + 2 + 3 + 4);
    // A lone surrogate (the runner refuses it; Jackson may hand one over) counts as three.
    assertThat(Subcalls.utf8Length("\ud834x")).isEqualTo(4);
  }

  @Test
  void aFrameOfAnotherRequest_isSkippedAsItStreams_withoutBeingKept() {
    String other =
        "{\"id\":\"rffffffffffffffff\",\"type\":\"done\",\"pad\":\"" + "a".repeat(200_000);
    Recorder r = new Recorder(1 << 20);
    FrameReader reader = new FrameReader(r);
    feedInPieces(reader, ("\n" + other).getBytes(StandardCharsets.US_ASCII), 65536);
    assertThat(r.ignored).isEqualTo(other.length());
    assertThat(r.events).isEmpty(); // the line has not ended
    feedInPieces(reader, ("\"}\n\n" + DONE + "\n").getBytes(StandardCharsets.US_ASCII), 65536);
    assertThat(r.events).containsExactly("ignored line");
    assertThat(r.frames).containsExactly(DONE);
  }

  @Test
  void aWantedFrameOverItsLimit_isReportedOnceAndSkipped() {
    String big = DONE.replace("}", ",\"pad\":\"" + "b".repeat(5000) + "\"}");
    Recorder r = new Recorder(1000);
    feedInPieces(
        new FrameReader(r),
        ("\n" + big + "\n\n" + DONE + "\n").getBytes(StandardCharsets.US_ASCII),
        512);
    assertThat(r.events).containsExactly("tooLong DONE");
    assertThat(r.frames).containsExactly(DONE);
  }

  @Test
  void aFrameOverTheInlineSize_comesInChunks_andStopsTheFeedAfterIt() {
    String big = DONE.replace("}", ",\"pad\":\"" + "c".repeat(200_000) + "\"}");
    Recorder r = new Recorder(1 << 20);
    FrameReader reader = new FrameReader(r);
    ByteBuffer b =
        ByteBuffer.wrap(("\n" + big + "\n\n" + DONE + "\n").getBytes(StandardCharsets.US_ASCII));
    assertThat(reader.feed(b)).isTrue();
    assertThat(r.frames).containsExactly(big);
    assertThat(reader.feed(b)).isFalse();
    assertThat(r.frames).containsExactly(big, DONE);
  }
}

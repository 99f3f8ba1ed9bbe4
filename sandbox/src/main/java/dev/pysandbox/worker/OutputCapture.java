package dev.pysandbox.worker;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Keeps the first and the last bytes of a stream and counts the rest, so that memory stays bounded
 * however much the code prints. Buffers grow on demand: a run that prints one line costs a few
 * bytes, not the whole cap.
 */
final class OutputCapture {
  private final int headLimit;
  private final int tailLimit;
  private byte[] head = new byte[256];
  private int headLength;
  private byte[] tail;
  private int tailStart;
  private int tailLength;
  private long total;

  /**
   * @param limit bytes kept in all: half at the head, half at the tail
   */
  OutputCapture(int limit) {
    this.headLimit = limit - limit / 2;
    this.tailLimit = limit / 2;
  }

  /** Every byte appended so far. */
  synchronized long total() {
    return total;
  }

  synchronized void append(ByteBuffer src) {
    int n = src.remaining();
    total += n;
    int toHead = Math.min(n, headLimit - headLength);
    if (toHead > 0) {
      if (headLength + toHead > head.length) {
        head =
            Arrays.copyOf(
                head, Math.min(headLimit, Math.max(head.length * 2, headLength + toHead)));
      }
      src.get(head, headLength, toHead);
      headLength += toHead;
    }
    if (src.hasRemaining() && tailLimit > 0) {
      if (tail == null) {
        tail = new byte[tailLimit];
      }
      int rest = src.remaining();
      if (rest > tailLimit) {
        src.position(src.position() + rest - tailLimit);
      }
      while (src.hasRemaining()) {
        int writeAt = (tailStart + tailLength) % tailLimit;
        int chunk = Math.min(src.remaining(), tailLimit - writeAt);
        src.get(tail, writeAt, chunk);
        int length = tailLength + chunk;
        if (length > tailLimit) {
          tailStart = (tailStart + length - tailLimit) % tailLimit;
          length = tailLimit;
        }
        tailLength = length;
      }
    }
    src.position(src.limit());
  }

  synchronized CapturedText snapshot() {
    String headText = new String(head, 0, headLength, StandardCharsets.UTF_8);
    if (total == headLength) {
      return new CapturedText(headText, false, total);
    }
    byte[] tailBytes = new byte[tailLength];
    for (int i = 0; i < tailLength; i++) {
      tailBytes[i] = tail[(tailStart + i) % tailLimit];
    }
    long omitted = total - headLength - tailLength;
    String marker =
        "\n[... pysandbox: "
            + omitted
            + " bytes omitted; "
            + total
            + " bytes in all, the first "
            + headLength
            + " and last "
            + tailLength
            + " kept ...]\n";
    return new CapturedText(
        headText + marker + new String(tailBytes, StandardCharsets.UTF_8), true, total);
  }
}

package dev.pysandbox.mcp;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Newline-delimited messages from a stream, each bounded: a line longer than the limit is not
 * buffered but skipped to its end, keeping only its head (so that the message's id can still be
 * found and answered). A trailing {@code \r} is dropped, so {@code \r\n} ends a line too.
 */
final class LineReader {
  /** How much of an over-long line is kept to look for its id. */
  static final int OVERSIZED_HEAD_BYTES = 64 * 1024;

  /** One line: a whole message, or the head of one that was too long. */
  record Line(byte[] bytes, int length, long totalBytes) {
    boolean oversized() {
      return totalBytes > length;
    }
  }

  private final InputStream in;
  private final int maxLineBytes;
  private final byte[] buffer = new byte[64 * 1024];
  private int position;
  private int end;

  LineReader(InputStream in, int maxLineBytes) {
    this.in = in;
    this.maxLineBytes = maxLineBytes;
  }

  /**
   * The next line, or {@code null} at the end of the stream. Bytes after the last newline are a
   * line of their own.
   */
  Line next() throws IOException {
    byte[] line = new byte[256];
    int length = 0;
    long total = 0;
    while (true) {
      if (position == end) {
        int n = in.read(buffer, 0, buffer.length);
        if (n < 0) {
          return total == 0 ? null : finish(line, length, total);
        }
        position = 0;
        end = n;
      }
      int newline = indexOf(buffer, position, end);
      int stop = newline < 0 ? end : newline;
      int n = stop - position;
      total += n;
      int room = (total <= maxLineBytes ? maxLineBytes : OVERSIZED_HEAD_BYTES) - length;
      int keep = Math.max(0, Math.min(n, room));
      if (total > maxLineBytes && length > OVERSIZED_HEAD_BYTES) {
        length = OVERSIZED_HEAD_BYTES; // over the limit: keep only the head from now on
      }
      if (keep > 0) {
        if (length + keep > line.length) {
          line =
              Arrays.copyOf(line, Math.max(length + keep, Math.min(line.length * 2, maxLineBytes)));
        }
        System.arraycopy(buffer, position, line, length, keep);
        length += keep;
      }
      position = stop;
      if (newline >= 0) {
        position++;
        return finish(line, length, total);
      }
    }
  }

  private static Line finish(byte[] line, int length, long total) {
    if (length > 0 && length == total && line[length - 1] == '\r') {
      return new Line(line, length - 1, total - 1);
    }
    return new Line(line, length, total);
  }

  private static int indexOf(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (b[i] == '\n') {
        return i;
      }
    }
    return -1;
  }
}

package dev.pysandbox.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * One trajectory file read as it grows: each {@link #next()} gives the lines completed since the
 * last. A file that does not exist yet gives nothing until it does; one that shrank (replaced, say)
 * is read again from its start. Only a regular file is opened, never through a link (a FIFO would
 * block the reader in open(2)). A line longer than {@link #MAX_LINE_BYTES} without its newline is
 * given as it is, so a broken file never holds memory.
 */
final class TrajectoryTail {
  static final int MAX_LINE_BYTES = 64 * 1024;
  private static final int READ_BYTES = 64 * 1024;

  private final Path file;
  private long offset;
  private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

  TrajectoryTail(Path file) {
    this.file = file;
  }

  Path file() {
    return file;
  }

  /** The lines completed since the last call, without their newlines. */
  List<String> next() throws IOException {
    List<String> lines = new ArrayList<>();
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      return lines;
    }
    if (!a.isRegularFile()) {
      throw new IOException(file + " is not a regular file (a link or a special file); not read");
    }
    try (SeekableByteChannel ch =
        Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
      if (ch.size() < offset) {
        offset = 0;
        partial.reset();
      }
      ch.position(offset);
      ByteBuffer buf = ByteBuffer.allocate(READ_BYTES);
      int n;
      while ((n = ch.read(buf)) > 0) {
        offset += n;
        byte[] b = buf.array();
        int start = 0;
        for (int i = 0; i < n; i++) {
          if (b[i] == '\n') {
            partial.write(b, start, i - start);
            lines.add(takePartial());
            start = i + 1;
          }
        }
        partial.write(b, start, n - start);
        if (partial.size() > MAX_LINE_BYTES) {
          lines.add(takePartial());
        }
        buf.clear();
      }
    } catch (NoSuchFileException e) {
      // deleted between the look and the open
    }
    return lines;
  }

  /** What was written after the last complete line, or {@code null}: a line cut short. */
  String unfinished() {
    return partial.size() == 0 ? null : partial.toString(StandardCharsets.UTF_8);
  }

  private String takePartial() {
    String line = partial.toString(StandardCharsets.UTF_8);
    partial.reset();
    return line;
  }
}

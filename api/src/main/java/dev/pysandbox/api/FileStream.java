package dev.pysandbox.api;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.Objects;

/**
 * One file opened for a face that streams it (a REST download) rather than holding it whole: what
 * it is, and its content, read through the descriptor the core opened and checked (a link refused,
 * not followed; never opened by its path again). The size, hash and time are those of the file as
 * it was opened; its content is read from that same inode, so a file the code rewrites meanwhile
 * may end early or differ from {@link #sha256()}. Not thread-safe; close it.
 *
 * @param path relative to {@code /mnt/data}, as asked for
 * @param mediaType guessed from its name
 * @param sizeBytes its size when it was opened
 * @param sha256 hex digest of its content when it was opened
 * @param modifiedAt its modification time
 * @param content at most {@code sizeBytes} bytes from the start (one stream per file: reading it
 *     moves it on); {@link InputStream#skip} moves without reading
 */
public record FileStream(
    String path,
    String mediaType,
    long sizeBytes,
    String sha256,
    Instant modifiedAt,
    InputStream content)
    implements AutoCloseable {
  public FileStream {
    Objects.requireNonNull(path);
    Objects.requireNonNull(mediaType);
    Objects.requireNonNull(sha256);
    Objects.requireNonNull(modifiedAt);
    Objects.requireNonNull(content);
  }

  /** Closes the file's descriptor. */
  @Override
  public void close() {
    try {
      content.close();
    } catch (IOException e) {
      // a descriptor's close does not fail in a way the caller could act on
    }
  }
}

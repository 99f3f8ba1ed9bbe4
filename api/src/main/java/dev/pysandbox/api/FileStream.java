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
 */
public final class FileStream implements AutoCloseable {
  private final String path;
  private final String mediaType;
  private final long sizeBytes;
  private final String sha256;
  private final Instant modifiedAt;
  private final InputStream content;

  /**
   * @param path relative to {@code /mnt/data}, as asked for
   * @param mediaType guessed from its name
   * @param sizeBytes its size when it was opened
   * @param sha256 hex digest of its content when it was opened
   * @param modifiedAt its modification time
   * @param content at most {@code sizeBytes} bytes from the start; {@link InputStream#skip} moves
   *     without reading
   */
  public FileStream(
      String path,
      String mediaType,
      long sizeBytes,
      String sha256,
      Instant modifiedAt,
      InputStream content) {
    this.path = Objects.requireNonNull(path);
    this.mediaType = Objects.requireNonNull(mediaType);
    this.sizeBytes = sizeBytes;
    this.sha256 = Objects.requireNonNull(sha256);
    this.modifiedAt = Objects.requireNonNull(modifiedAt);
    this.content = Objects.requireNonNull(content);
  }

  public String path() {
    return path;
  }

  public String mediaType() {
    return mediaType;
  }

  public long sizeBytes() {
    return sizeBytes;
  }

  public String sha256() {
    return sha256;
  }

  public Instant modifiedAt() {
    return modifiedAt;
  }

  /** The content, from the start (one stream per file: reading it moves it on). */
  public InputStream content() {
    return content;
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

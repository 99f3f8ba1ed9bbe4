package dev.pysandbox.core.files;

import dev.pysandbox.util.BulkInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The first {@code size} bytes of an opened regular file, read with {@code pread} through its
 * descriptor (never by its path), so that skipping is free: a range request reads only its range.
 * Ends early when the file shrank. Owns the descriptor; not thread-safe.
 */
final class DescriptorInputStream extends BulkInputStream {
  private static final int CHUNK = 64 * 1024;

  private final Descriptor file;
  private final long size;
  private final ByteBuffer buffer;
  private long position;

  DescriptorInputStream(Descriptor file, long size) {
    this.file = file;
    this.size = size;
    this.buffer = ByteBuffer.allocateDirect((int) Math.max(1, Math.min(CHUNK, size)));
  }

  @Override
  protected int readSome(byte[] b, int off, int len) throws IOException {
    if (position >= size) {
      return -1;
    }
    int n = (int) Math.min(Math.min(len, buffer.capacity()), size - position);
    int got = file.read(buffer, n, position);
    if (got == 0) {
      position = size; // the file shrank while it was read: what there was is all there is
      return -1;
    }
    buffer.get(0, b, off, got);
    position += got;
    return got;
  }

  @Override
  public long skip(long n) {
    long k = Math.max(0, Math.min(n, size - position));
    position += k;
    return k;
  }

  @Override
  public int available() {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(0, size - position));
  }

  @Override
  public void close() {
    file.close();
  }
}

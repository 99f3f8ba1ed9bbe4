package dev.pysandbox.util;

import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;

/**
 * An {@link InputStream} that reads only in bulk: its one-byte {@code read()} goes through the bulk
 * read, and the bulk read checks its range and answers an empty one itself, so that a subclass
 * writes only {@link #readSome} (a file read by descriptor, a multipart body).
 */
public abstract class BulkInputStream extends InputStream {
  @Override
  public final int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public final int read(byte[] b, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, b.length);
    return len == 0 ? 0 : readSome(b, off, len);
  }

  /** Reads between 1 and {@code len} bytes into {@code b} from {@code off}; -1 at the end. */
  protected abstract int readSome(byte[] b, int off, int len) throws IOException;
}

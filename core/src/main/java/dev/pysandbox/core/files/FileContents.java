package dev.pysandbox.core.files;

import dev.pysandbox.util.Sha256;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * Hashes and copies an open regular file by its data extents ({@code SEEK_DATA}/{@code SEEK_HOLE}):
 * holes are hashed as the zeros a reader sees without reading them, and left as holes in a copy, so
 * a sparse file costs its data, not its apparent size. The hash is always of exactly the bytes
 * kept, even when the code rewrites the file meanwhile.
 */
public final class FileContents {
  private static final int CHUNK = 64 * 1024;
  private static final byte[] ZEROS = new byte[CHUNK];
  private static final ThreadLocal<ByteBuffer> BUFFERS =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(CHUNK));

  /**
   * What a copy kept.
   *
   * @param size the copy's size (less than asked when the file shrank meanwhile)
   * @param dataBytes bytes of data written (holes excluded)
   * @param sha256 of the copy's content, holes as zeros
   * @param overBudget the data passed the budget: the copy is incomplete and must be removed
   */
  public record Copied(long size, long dataBytes, String sha256, boolean overBudget) {}

  private FileContents() {}

  /** The sha256 of the first {@code size} bytes of {@code src}. */
  public static String sha256(Descriptor src, long size) throws IOException {
    return copy(src, size, null, Long.MAX_VALUE).sha256();
  }

  /** As {@link #sha256(Descriptor, long)}, charged to {@code spend}. */
  public static String sha256(Descriptor src, long size, CollectBudget spend)
      throws IOException, CollectBudget.Spent {
    return copy(src, size, null, Long.MAX_VALUE, spend).sha256();
  }

  /**
   * Copies the first {@code size} bytes of {@code src} into the new, empty {@code dst} (or only
   * hashes them when {@code dst} is {@code null}), writing at most {@code budget} bytes of data.
   */
  public static Copied copy(Descriptor src, long size, Descriptor dst, long budget)
      throws IOException {
    try {
      return copy(src, size, dst, budget, CollectBudget.unlimited());
    } catch (CollectBudget.Spent e) {
      throw new IllegalStateException("an unlimited budget ran out", e);
    }
  }

  /**
   * As {@link #copy(Descriptor, long, Descriptor, long)}, every byte hashed (holes too: hashing
   * their zeros costs as much) charged to {@code spend}, which is asked again every {@value #CHUNK}
   * bytes; a copy cut short is incomplete and must be removed.
   *
   * @throws CollectBudget.Spent when the budget ran out (a deadline, a cancel, the bytes)
   */
  public static Copied copy(
      Descriptor src, long size, Descriptor dst, long budget, CollectBudget spend)
      throws IOException, CollectBudget.Spent {
    MessageDigest md = Sha256.newDigest();
    ByteBuffer buf = BUFFERS.get();
    long pos = 0;
    long data = 0;
    extents:
    while (pos < size) {
      long dataAt = src.seek(pos, NativeFs.SEEK_DATA);
      if (dataAt < 0 || dataAt > size) {
        dataAt = size;
      }
      zeros(md, dataAt - pos, spend);
      pos = dataAt;
      if (pos >= size) {
        break;
      }
      long holeAt = src.seek(pos, NativeFs.SEEK_HOLE);
      if (holeAt < 0 || holeAt > size) {
        holeAt = size;
      }
      while (pos < holeAt) {
        int n = src.read(buf, (int) Math.min(CHUNK, holeAt - pos), pos);
        if (n == 0) {
          break extents; // the file shrank while it was read: keep what there was
        }
        data += n;
        spend.take(n);
        if (dst != null) {
          if (data > budget) {
            return new Copied(pos, data, null, true);
          }
          dst.writeFully(buf, n, pos);
        }
        buf.position(0).limit(n);
        md.update(buf);
        buf.clear();
        pos += n;
      }
    }
    if (dst != null) {
      dst.truncate(pos);
    }
    return new Copied(pos, data, HexFormat.of().formatHex(md.digest()), false);
  }

  private static void zeros(MessageDigest md, long n, CollectBudget spend)
      throws CollectBudget.Spent {
    while (n > 0) {
      int k = (int) Math.min(ZEROS.length, n);
      spend.take(k);
      md.update(ZEROS, 0, k);
      n -= k;
    }
  }
}

package dev.pysandbox.util;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Locale;

/**
 * A write that did not reach the disk because its file system had no space (ENOSPC) or its user no
 * quota (EDQUOT) left. The message names the file, the file system that holds it (mount point and
 * device, with what it has free) and the bytes the write wanted, so that an operator knows what to
 * clean up; callers turn it into the {@code disk_full} error.
 */
public final class DiskFullException extends IOException {
  private static final long serialVersionUID = 1L;

  /** Slack below which a file system counts as full when the error's text does not say. */
  private static final long FULL_BELOW_BYTES = 64 * 1024;

  private final transient Path path;
  private final long wantedBytes;

  private DiskFullException(String message, Path path, long wantedBytes, Throwable cause) {
    super(message, cause);
    this.path = path;
    this.wantedBytes = wantedBytes;
  }

  /** The file that could not be written. */
  public Path path() {
    return path;
  }

  /** What the write wanted, in bytes; -1 when not known. */
  public long wantedBytes() {
    return wantedBytes;
  }

  /**
   * {@code e} as a {@code DiskFullException} when it is one: ENOSPC or EDQUOT by its text, or any
   * failure of a write while the file system has less than the write still wanted (the text of an
   * errno depends on the locale). Otherwise {@code null}.
   *
   * @param wantedBytes what the write wanted in all, -1 when not known
   */
  public static DiskFullException of(IOException e, Path path, long wantedBytes) {
    if (e instanceof DiskFullException d) {
      return d;
    }
    String text = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
    boolean said = text.contains("no space left") || text.contains("disk quota exceeded");
    long usable = usable(path);
    if (!said && (usable < 0 || usable > Math.max(wantedBytes, 0) + FULL_BELOW_BYTES)) {
      return null;
    }
    return new DiskFullException(
        "no space left to write "
            + path
            + (wantedBytes >= 0 ? " (" + wantedBytes + " bytes)" : "")
            + ": "
            + describe(path)
            + " ("
            + e.getMessage()
            + ")",
        path,
        wantedBytes,
        e);
  }

  /**
   * The file system that holds {@code path}, a directory or a file (then looked up from its
   * directory, so that a link at {@code path} is never followed), as an operator finds it: its
   * mount point and device, and what it has free ("the file system /srv (/dev/vdb), 0 bytes free of
   * 10737418240").
   */
  public static String describe(Path path) {
    Path p = existing(path);
    if (p == null) {
      return "the file system of " + path;
    }
    try {
      FileStore store = Files.getFileStore(p);
      return "the file system "
          + store
          + ", "
          + store.getUsableSpace()
          + " bytes free of "
          + store.getTotalSpace();
    } catch (IOException e) {
      return "the file system of " + path;
    }
  }

  /** Bytes the file system holding {@code path} has free for this user; -1 when unknown. */
  public static long usable(Path path) {
    Path p = existing(path);
    try {
      return p == null ? -1 : Files.getFileStore(p).getUsableSpace();
    } catch (IOException e) {
      return -1;
    }
  }

  private static Path existing(Path path) {
    Path p = path.toAbsolutePath();
    if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
      p = p.getParent();
    }
    while (p != null && !Files.isDirectory(p)) {
      p = p.getParent();
    }
    return p;
  }
}

package dev.pysandbox.core.files;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * One open file descriptor, opened by {@link NativeFs}: directories relative to their parent with
 * {@code O_NOFOLLOW}, files also with {@code O_NONBLOCK}. What it is gets checked on the descriptor
 * ({@link #stat()}), never by a path that could be swapped between the check and the use. Not
 * thread-safe; close it.
 */
public final class Descriptor implements AutoCloseable {
  private int fd;

  private Descriptor(int fd) {
    this.fd = fd;
  }

  /** A call that failed with an errno. */
  public static final class ErrnoException extends IOException {
    private static final long serialVersionUID = 1L;
    private final int errno;

    ErrnoException(String call, int errno) {
      super(call + ": " + NativeFs.strerror(errno));
      this.errno = errno;
    }

    /** The errno the call failed with (compare with {@link NativeFs}'s constants). */
    public int errno() {
      return errno;
    }
  }

  private static int check(int r, String call, byte[] name) throws ErrnoException {
    if (r < 0) {
      throw new ErrnoException(name == null ? call : call + "(" + shortName(name) + ")", -r);
    }
    return r;
  }

  private static String shortName(byte[] name) {
    String s = new String(name, StandardCharsets.UTF_8);
    return s.length() > 64 ? s.substring(0, 64) + "..." : s;
  }

  /** Opens a directory the server chose (never one under the code's control) by its path. */
  public static Descriptor openDirectory(Path path) throws IOException {
    NativeFs.require();
    byte[] p = path.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8);
    return new Descriptor(check(NativeFs.openRoot(p), "open(" + path + ")", null));
  }

  /** The directory {@code name} in this one; a symbolic link fails (ELOOP or ENOTDIR). */
  public Descriptor openDirectory(byte[] name) throws IOException {
    return new Descriptor(check(NativeFs.openDir(fd, name), "openat", name));
  }

  /** This directory's parent ({@code ..}). */
  Descriptor openParent() throws IOException {
    return new Descriptor(check(NativeFs.openParent(fd), "openat(..)", null));
  }

  /**
   * Opens {@code name} for reading without following a link and without blocking: a FIFO opens at
   * once, a leased file fails with EAGAIN. The caller checks {@link #stat()} before reading.
   */
  public Descriptor openFile(byte[] name) throws IOException {
    return new Descriptor(check(NativeFs.openFile(fd, name), "openat", name));
  }

  /** Creates a new file (never an existing one or through a link) with exactly {@code mode}. */
  public Descriptor createFile(byte[] name, int mode) throws IOException {
    return new Descriptor(check(NativeFs.createFile(fd, name, mode), "openat(O_CREAT)", name));
  }

  /** Creates a directory; an existing one is fine. */
  public void makeDirectory(byte[] name, int mode) throws IOException {
    int r = NativeFs.mkdirAt(fd, name, mode);
    if (r < 0 && -r != NativeFs.eexist()) {
      check(r, "mkdirat", name);
    }
  }

  /** The descriptor's number: {@code /proc/self/fd/N} names this very file, whatever its path. */
  int number() {
    return fd;
  }

  public Stat stat() throws IOException {
    long[] out = new long[8];
    check(NativeFs.fstat(fd, out), "fstat", null);
    return Stat.of(out);
  }

  /** The entry {@code name}, not following a link; {@code null} when it is gone. */
  public Stat stat(byte[] name) throws IOException {
    long[] out = new long[8];
    int r = NativeFs.fstatAt(fd, name, out);
    if (r == -NativeFs.enoent()) {
      return null;
    }
    check(r, "fstatat", name);
    return Stat.of(out);
  }

  /** Up to {@code len} bytes at {@code pos} into the start of a direct buffer; 0 at the end. */
  public int read(ByteBuffer direct, int len, long pos) throws IOException {
    return check(NativeFs.pread(fd, direct, 0, len, pos), "pread", null);
  }

  void writeFully(ByteBuffer direct, int len, long pos) throws IOException {
    int done = 0;
    while (done < len) {
      done += check(NativeFs.pwrite(fd, direct, done, len - done, pos + done), "pwrite", null);
    }
  }

  /**
   * {@code lseek} with {@code SEEK_DATA} or {@code SEEK_HOLE}.
   *
   * @return the offset, or -1 when there is no data at or after {@code pos} (ENXIO)
   */
  long seek(long pos, int whence) throws IOException {
    long r = NativeFs.lseek(fd, pos, whence);
    if (r < 0) {
      if (-r == NativeFs.enxio()) {
        return -1;
      }
      check((int) r, "lseek", null);
    }
    return r;
  }

  void truncate(long len) throws IOException {
    check(NativeFs.ftruncate(fd, len), "ftruncate", null);
  }

  /** Puts what was written to this file (or directory) on the disk, or fails as write-back did. */
  public void sync() throws IOException {
    check(NativeFs.fsync(fd), "fsync", null);
  }

  /** Puts everything of this descriptor's file system on the disk, or fails as write-back did. */
  public void syncFileSystem() throws IOException {
    check(NativeFs.syncfs(fd), "syncfs", null);
  }

  /** Directory entries (linux_dirent64) into the start of a direct buffer; 0 at the end. */
  int readEntries(ByteBuffer direct) throws IOException {
    return check(NativeFs.getdents(fd, direct, direct.capacity()), "getdents64", null);
  }

  /** Goes back to {@code offset}, a {@code d_off} cookie of this directory's entries. */
  void seekEntries(long offset) throws IOException {
    long r = NativeFs.lseek(fd, offset, NativeFs.SEEK_SET);
    if (r < 0) {
      check((int) r, "lseek", null);
    }
  }

  /** Removes the entry {@code name} of this directory (never following a link). */
  public void unlink(byte[] name, boolean directory) throws IOException {
    check(NativeFs.unlinkAt(fd, name, directory), "unlinkat", name);
  }

  /** Moves an entry of this directory into {@code target}, never over an existing one. */
  public void rename(byte[] name, Descriptor target, byte[] newName) throws IOException {
    check(NativeFs.renameNoReplace(fd, name, target.fd, newName), "renameat2", name);
  }

  /** Makes the directory {@code name} of this one accessible again, without following a link. */
  void chmodDirectory(byte[] name, int mode) throws IOException {
    check(NativeFs.chmodDir(fd, name, mode), "chmod", name);
  }

  @Override
  public void close() {
    if (fd >= 0) {
      NativeFs.close(fd);
      fd = -1;
    }
  }
}

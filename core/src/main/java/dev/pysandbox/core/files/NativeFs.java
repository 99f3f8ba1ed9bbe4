package dev.pysandbox.core.files;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.util.NativeLibraries;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The few system calls pysandbox needs and Java cannot make: {@code openat} with {@code O_NONBLOCK}
 * (so that an open of a FIFO or a leased file returns at once), {@code fstat} on a descriptor,
 * {@code getdents64}, {@code lseek} with {@code SEEK_DATA}/{@code SEEK_HOLE}, {@code unlinkat},
 * {@code fsync} and {@code syncfs} on a descriptor, {@code dup2} of stdout. Every call returns
 * {@code -errno} on failure; {@link Descriptor} turns that into exceptions.
 *
 * <p>The library ({@code src/main/c/pysandbox_fs.c}) is built by {@code mvn package} for the build
 * machine's architecture and packaged in the jar; it is written to {@code <data_dir>/native/} under
 * a name that carries its content hash (so a new version never replaces a library a running server
 * has mapped) and loaded from there, once per JVM.
 */
public final class NativeFs {
  private static final String RESOURCE_DIR = "/dev/pysandbox/core/native/";

  private static volatile Path directory;
  private static volatile boolean loaded;
  private static int[] errnos;

  private NativeFs() {}

  /** Where the library is written and loaded from; set by the core when it is created. */
  public static void useDirectory(Path dir) {
    if (!loaded) {
      directory = dir;
    }
  }

  /**
   * Loads the library if it is not loaded yet.
   *
   * @throws PysandboxException {@code backend_unavailable} when it cannot be
   */
  public static void require() {
    if (!loaded) {
      load();
    }
  }

  private static synchronized void load() {
    if (loaded) {
      return;
    }
    String platform = platform();
    String resource = RESOURCE_DIR + platform + "/libpysandboxfs.so";
    try {
      Path dir = directory;
      if (dir == null) {
        throw new IllegalStateException("NativeFs.useDirectory was not called");
      }
      Path lib =
          NativeLibraries.install(NativeFs.class, resource, dir, "libpysandboxfs")
              .orElseThrow(
                  () ->
                      unavailable(
                          "the jar holds no native file library for "
                              + platform
                              + " (it is built with the jar, by gcc, for the build machine's"
                              + " architecture; build pysandbox on this machine: scripts/setup.sh)",
                          null));
      System.load(lib.toAbsolutePath().toString());
      errnos = constants();
      loaded = true;
    } catch (IOException | UnsatisfiedLinkError e) {
      throw unavailable("cannot load the native file library: " + e, e);
    }
  }

  private static String platform() {
    String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
    return os + "-" + System.getProperty("os.arch");
  }

  private static PysandboxException unavailable(String message, Throwable cause) {
    return new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, message, cause);
  }

  // -- errno values, as this platform's C library defines them -----------------------------------

  public static int enoent() {
    return errnos[0];
  }

  public static int enotdir() {
    return errnos[1];
  }

  public static int eloop() {
    return errnos[2];
  }

  static int eacces() {
    return errnos[3];
  }

  /** EAGAIN, which is EWOULDBLOCK on Linux: a non-blocking open of a leased file. */
  static int eagain() {
    return errnos[4];
  }

  /** A non-blocking open of a socket file, or SEEK_DATA past the last data. */
  static int enxio() {
    return errnos[5];
  }

  public static int eexist() {
    return errnos[6];
  }

  static int enotempty() {
    return errnos[7];
  }

  static int eperm() {
    return errnos[8];
  }

  // -- the calls ---------------------------------------------------------------------------------

  static final int SEEK_SET = 0;
  static final int SEEK_DATA = 3;
  static final int SEEK_HOLE = 4;

  private static native int[] constants();

  /** open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK). */
  static native int openRoot(byte[] path);

  /** openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK). */
  static native int openDir(int dirfd, byte[] name);

  /** openat(dirfd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK). */
  static native int openParent(int dirfd);

  /** openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY). */
  static native int openFile(int dirfd, byte[] name);

  /** openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC), then fchmod. */
  static native int createFile(int dirfd, byte[] name, int mode);

  static native int mkdirAt(int dirfd, byte[] name, int mode);

  /** Fills mode, size, allocated bytes, dev, ino, mtime (ns), nlink, uid. */
  static native int fstat(int fd, long[] out);

  /** As {@link #fstat}, for a name in a directory, not following a link. */
  static native int fstatAt(int dirfd, byte[] name, long[] out);

  /**
   * Sets the calling thread's nice value (its CPU weight against the server's other threads and the
   * sandboxes): 0 or -errno.
   */
  static native int niceThisThread(int nice);

  /**
   * Makes the calling thread yield the CPU to everything else the host runs (nice 19), for
   * background work; does nothing (and says so at debug level) when that is not possible.
   */
  public static void backgroundPriority() {
    try {
      require();
      int r = niceThisThread(19);
      if (r != 0) {
        org.slf4j.LoggerFactory.getLogger(NativeFs.class)
            .debug("could not lower the priority of {}: errno {}", Thread.currentThread(), -r);
      }
    } catch (RuntimeException | UnsatisfiedLinkError e) {
      org.slf4j.LoggerFactory.getLogger(NativeFs.class)
          .debug("could not lower the priority of {}: {}", Thread.currentThread(), e.toString());
    }
  }

  /** pread into a direct buffer. */
  static native int pread(int fd, ByteBuffer direct, int off, int len, long pos);

  /** pwrite from a direct buffer. */
  static native int pwrite(int fd, ByteBuffer direct, int off, int len, long pos);

  static native long lseek(int fd, long pos, int whence);

  static native int ftruncate(int fd, long len);

  /** getdents64 into a direct buffer. */
  static native int getdents(int fd, ByteBuffer direct, int len);

  static native int unlinkAt(int dirfd, byte[] name, boolean directory);

  /** renameat2 with RENAME_NOREPLACE. */
  static native int renameNoReplace(int fromDir, byte[] from, int toDir, byte[] to);

  /** chmod of a directory opened O_PATH | O_NOFOLLOW | O_DIRECTORY, through /proc/self/fd. */
  static native int chmodDir(int dirfd, byte[] name, int mode);

  static native int close(int fd);

  /** fsync: 0 or -errno (the write-back error that lost data). */
  static native int fsync(int fd);

  /** syncfs of the file system holding {@code fd}: 0 or -errno. */
  static native int syncfs(int fd);

  /**
   * Duplicates fd 1 to a new close-on-exec descriptor and makes fd 1 a copy of stderr.
   *
   * @return the new descriptor, or {@code null} (the old stdout untouched) when it could not
   */
  public static native java.io.FileDescriptor moveStdout();

  static native String strerror(int errno);
}

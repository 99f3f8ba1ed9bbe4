package dev.pysandbox.core.files;

/**
 * What {@code fstat} said about one inode.
 *
 * @param mode type and permission bits ({@code st_mode})
 * @param size apparent size in bytes
 * @param allocated bytes of disk it takes ({@code st_blocks * 512}): what a sparse file, a
 *     directory or a long symbolic link really cost
 * @param mtimeNanos modification time, in nanoseconds since the epoch
 * @param links hard links to it ({@code st_nlink}): a blob with more than one was planted
 */
public record Stat(
    int mode, long size, long allocated, long dev, long ino, long mtimeNanos, long links) {
  private static final int S_IFMT = 0170000;
  private static final int S_IFREG = 0100000;
  private static final int S_IFDIR = 0040000;
  private static final int S_IFLNK = 0120000;
  private static final int S_IFIFO = 0010000;
  private static final int S_IFSOCK = 0140000;

  /** The identity of an inode on the host: device and inode number. */
  record Key(long dev, long ino) {}

  static Stat of(long[] v) {
    return new Stat((int) v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
  }

  Key key() {
    return new Key(dev, ino);
  }

  public boolean isRegular() {
    return (mode & S_IFMT) == S_IFREG;
  }

  public boolean isDirectory() {
    return (mode & S_IFMT) == S_IFDIR;
  }

  /** Permission bits only, without setuid, setgid or sticky. */
  public int permissions() {
    return mode & 0777;
  }

  /** What the inode is, in words, for a file the server does not keep. */
  public String kind() {
    return switch (mode & S_IFMT) {
      case S_IFREG -> "a regular file";
      case S_IFDIR -> "a directory";
      case S_IFLNK -> "a symbolic link";
      case S_IFIFO -> "a FIFO";
      case S_IFSOCK -> "a socket";
      default -> "a device file";
    };
  }
}

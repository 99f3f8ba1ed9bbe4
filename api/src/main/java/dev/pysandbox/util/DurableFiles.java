package dev.pysandbox.util;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one way pysandbox writes a whole file: into a new temporary file in the target's directory
 * (O_CREAT | O_EXCL, never through a link), synced to the disk, its size checked against what was
 * written, then renamed over the target and the directory synced. So a reader sees the old file or
 * the new one, never part of one; a failure leaves no temporary file behind; and a size or hash is
 * only ever reported for bytes the disk has taken. A file system that is full (or a quota that is
 * used up) is a {@link DiskFullException} that names it.
 *
 * <p>Why sync: a write into the page cache succeeds even where the disk cannot take it later (a
 * workspace image whose host disk is full loses the data at write-back, silently: issue 23), and
 * only {@code fsync} reports that.
 */
public final class DurableFiles {
  /** What was written: its size and the sha256 of exactly those bytes. */
  public record Written(long size, String sha256) {}

  /** Fills the new, empty temporary file. */
  @FunctionalInterface
  public interface Content {
    /**
     * @return what was written ({@link HashingChannel} counts and hashes it)
     * @throws IOException to give up: the temporary file is removed, the target left as it was
     */
    Written writeTo(FileChannel file) throws IOException;
  }

  /** What to do with the synced temporary file before it is renamed (its owner, say). */
  @FunctionalInterface
  public interface BeforeRename {
    void accept(PosixFileAttributeView temp) throws IOException;
  }

  private static final Set<PosixFilePermission> PRIVATE =
      Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
  private static final Set<PosixFilePermission> READABLE =
      PosixFilePermissions.fromString("rw-r--r--");

  /**
   * {@code .<name>.<pid>.<random>.tmp}: the writer's process id tells a crash's leftover (a dead
   * process's, or this process's when no write of its own has it open) from a temporary file
   * another live writer is still filling.
   */
  private static final Pattern TEMP = Pattern.compile("\\..+\\.(\\d{1,10})\\.[0-9a-f]+\\.tmp");

  private static final long PID = ProcessHandle.current().pid();

  /** Names of the temporary files this process is writing now (each name is new). */
  private static final Set<String> WRITING = ConcurrentHashMap.newKeySet();

  private DurableFiles() {}

  /** {@code bytes} as a {@link Content}. */
  public static Content bytes(byte[] bytes) {
    return file -> {
      HashingChannel out = new HashingChannel(file);
      ByteBuffer b = ByteBuffer.wrap(bytes);
      while (b.hasRemaining()) {
        out.write(b);
      }
      return out.written();
    };
  }

  /** Replaces {@code target} with {@code bytes} (mode 0600). */
  public static Written write(Path target, byte[] bytes) throws IOException {
    return write(target, bytes.length, bytes(bytes), PRIVATE);
  }

  /** Replaces {@code target} with {@code bytes} that everyone may read (mode 0644). */
  public static Written writeReadable(Path target, byte[] bytes) throws IOException {
    return write(target, bytes.length, bytes(bytes), READABLE);
  }

  /**
   * Replaces {@code target}, in a directory the server owns, with what {@code content} writes.
   *
   * @param wantedBytes what the file will take, for a full disk's message; -1 when not known
   * @param mode the new file's exact permissions (whatever the umask)
   * @throws DiskFullException when its file system (or the user's quota) is full
   */
  public static Written write(
      Path target, long wantedBytes, Content content, Set<PosixFilePermission> mode)
      throws IOException {
    Path dir = target.toAbsolutePath().getParent();
    String tempName = tempName(target.getFileName().toString());
    Path temp = dir.resolve(tempName);
    WRITING.add(tempName);
    try {
      Written w;
      try (FileChannel ch =
          FileChannel.open(
              temp,
              StandardOpenOption.CREATE_NEW,
              StandardOpenOption.WRITE,
              LinkOption.NOFOLLOW_LINKS)) {
        w = fill(ch, content);
      }
      Files.setPosixFilePermissions(temp, mode);
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
      syncDirectory(dir);
      return w;
    } catch (IOException | RuntimeException e) {
      deleteQuietly(temp, e);
      throw diskFullOr(e, target, wantedBytes);
    } finally {
      WRITING.remove(tempName);
    }
  }

  /**
   * Replaces {@code name} in {@code dir}, a directory held open that others (the code) may change
   * meanwhile: every step is relative to it, the temporary file is created without following a
   * link, and the rename replaces whatever is at {@code name} (a link the code planted is replaced,
   * never written through).
   *
   * @param where the directory's path, for messages and to describe its file system
   * @param beforeRename given the synced temporary file's attributes (to set its owner)
   * @throws DiskFullException when the directory's file system is full
   */
  public static Written write(
      SecureDirectoryStream<Path> dir,
      Path where,
      String name,
      long wantedBytes,
      Content content,
      BeforeRename beforeRename)
      throws IOException {
    Path temp = Path.of(tempName(name));
    Set<OpenOption> create =
        Set.of(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW, LinkOption.NOFOLLOW_LINKS);
    try {
      Written w;
      try (SeekableByteChannel ch = dir.newByteChannel(temp, create)) {
        w = fill(fileChannel(ch), content);
      }
      beforeRename.accept(
          dir.getFileAttributeView(temp, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS));
      dir.move(temp, dir, Path.of(name));
      try (SeekableByteChannel self = dir.newByteChannel(Path.of("."), Set.of())) {
        fileChannel(self).force(true);
      }
      return w;
    } catch (IOException | RuntimeException e) {
      try {
        dir.deleteFile(temp);
      } catch (IOException gone) {
        // never made, or already renamed
      }
      throw diskFullOr(e, where.resolve(name), wantedBytes);
    }
  }

  /** Syncs a directory, so that the names just made or renamed in it last. */
  public static void syncDirectory(Path dir) throws IOException {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  private static Written fill(FileChannel ch, Content content) throws IOException {
    Written w = content.writeTo(ch);
    ch.force(true);
    long size = ch.size();
    if (size != w.size()) {
      throw new IOException(
          "the file holds " + size + " bytes after " + w.size() + " were written and synced");
    }
    return w;
  }

  private static FileChannel fileChannel(SeekableByteChannel ch) throws IOException {
    if (ch instanceof FileChannel f) {
      return f;
    }
    throw new IOException("this platform cannot sync a file opened in a directory stream");
  }

  private static String tempName(String name) {
    String shown = name.length() > 100 ? name.substring(0, 100) : name;
    return "." + shown + "." + PID + "." + RandomIds.hex(8) + ".tmp";
  }

  /**
   * Deletes the temporary files in {@code dir} that writers which died (a crash, a kill) left
   * behind; those of live writers stay.
   */
  public static void removeAbandoned(Path dir) throws IOException {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, ".*.tmp")) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        Matcher m = TEMP.matcher(name);
        if (m.matches() && abandoned(name, Long.parseLong(m.group(1)))) {
          Files.deleteIfExists(entry);
        }
      }
    }
  }

  private static boolean abandoned(String name, long pid) {
    if (pid == PID) {
      return !WRITING.contains(name);
    }
    return ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
  }

  /** {@code e} as a {@link DiskFullException} when it is one; a runtime failure is rethrown. */
  private static IOException diskFullOr(Exception e, Path target, long wanted) {
    if (e instanceof RuntimeException r) {
      throw r;
    }
    IOException io = (IOException) e;
    DiskFullException full = DiskFullException.of(io, target, wanted);
    return full == null ? io : full;
  }

  private static void deleteQuietly(Path temp, Exception failure) {
    try {
      Files.deleteIfExists(temp);
    } catch (IOException e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * A channel that counts and hashes the bytes the file took (each {@code write} may take fewer
   * than it was given; only those are hashed), for a {@link Content} that streams.
   */
  public static final class HashingChannel implements WritableByteChannel {
    private final WritableByteChannel out;
    private final MessageDigest md = Sha256.newDigest();
    private long size;

    public HashingChannel(WritableByteChannel out) {
      this.out = out;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
      ByteBuffer seen = src.duplicate();
      int n = out.write(src);
      seen.limit(seen.position() + n);
      md.update(seen);
      size += n;
      return n;
    }

    /** What was written so far (once: the hash is final). */
    public Written written() {
      return new Written(size, HexFormat.of().formatHex(md.digest()));
    }

    @Override
    public boolean isOpen() {
      return out.isOpen();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}

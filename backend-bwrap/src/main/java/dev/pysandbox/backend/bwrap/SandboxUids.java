package dev.pysandbox.backend.bwrap;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.config.UidRange;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A host uid (and the gid of the same number) for each live sandbox, from {@code
 * sandbox_uid_range}, so that sandboxes share no per-user kernel limit: processes (RLIMIT_NPROC),
 * inotify instances and watches, pending signals, pipe buffers. A uid is taken by holding an
 * exclusive lock on {@code /run/pysandbox/uids/<uid>} for the sandbox's life, so that servers of
 * other data directories on the same host never hand it out too; the kernel drops the lock if the
 * server dies, and the sandbox dies with the server.
 */
final class SandboxUids {
  private static final Logger log = LoggerFactory.getLogger(SandboxUids.class);
  static final Path LOCK_DIR = Path.of("/run/pysandbox/uids");

  /**
   * Every uid this JVM holds or is trying to take, whichever backend took it. A lock is a POSIX
   * record lock, owned by the process: a second channel opened on a held uid's file in this JVM
   * would drop the lock when closed, so a uid's file is opened by one thread at a time and never
   * again until the uid is released.
   */
  private static final Set<Integer> TAKEN = ConcurrentHashMap.newKeySet();

  private static final Map<Integer, FileLock> LOCKS = new ConcurrentHashMap<>();

  private final UidRange range;

  private SandboxUids(UidRange range) {
    this.range = range;
  }

  /**
   * @throws PysandboxException when the range collides with the host's users, groups or subordinate
   *     id ranges, or the lock directory cannot be made
   */
  static SandboxUids open(UidRange range) {
    requireNoCollision(range);
    try {
      Files.createDirectories(LOCK_DIR.getParent());
      if (!Files.isDirectory(LOCK_DIR)) {
        Files.createDirectory(LOCK_DIR);
        Files.setPosixFilePermissions(LOCK_DIR, PosixFilePermissions.fromString("rwx------"));
      }
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "bwrap: cannot make " + LOCK_DIR + " for sandbox_uid_range: " + e.getMessage(),
          e);
    }
    return new SandboxUids(range);
  }

  /**
   * The range checked against the host's users, without making the lock directory: for commands
   * that only look. The result must not allocate.
   *
   * @throws PysandboxException when the range collides with the host's users, groups or ranges
   */
  static SandboxUids inspect(UidRange range) {
    requireNoCollision(range);
    return new SandboxUids(range);
  }

  private static void requireNoCollision(UidRange range) {
    Optional<String> collision = collision(range);
    if (collision.isPresent()) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "bwrap: sandbox_uid_range "
              + range
              + " overlaps "
              + collision.get()
              + ": a host user with a sandbox's uid could signal or trace it and read its files;"
              + " set sandbox_uid_range to ids nothing else uses, or to off");
    }
  }

  UidRange range() {
    return range;
  }

  /**
   * Takes the lowest uid of the range that no live sandbox on this host holds.
   *
   * @throws PysandboxException {@code backend_unavailable} when every uid is held
   */
  HostUser allocate() {
    for (long id = range.first(); id <= range.last(); id++) {
      int uid = (int) id;
      if (!TAKEN.add(uid)) {
        continue;
      }
      if (!tryLock(uid)) {
        TAKEN.remove(uid);
        continue;
      }
      return new HostUser(Integer.toString(uid), uid, uid);
    }
    throw new PysandboxException(
        ErrorCode.BACKEND_UNAVAILABLE,
        "bwrap: no free uid in sandbox_uid_range "
            + range
            + ": all "
            + range.size()
            + " are held by live sandboxes of this or another server on this host (locks in "
            + LOCK_DIR
            + "); widen the range, or close sessions");
  }

  private static boolean tryLock(int uid) {
    FileChannel channel = null;
    try {
      channel =
          FileChannel.open(
              LOCK_DIR.resolve(Integer.toString(uid)),
              StandardOpenOption.CREATE,
              StandardOpenOption.WRITE);
      FileLock lock = channel.tryLock();
      if (lock != null) {
        LOCKS.put(uid, lock);
        return true;
      }
      channel.close();
      return false;
    } catch (IOException | OverlappingFileLockException e) {
      closeQuietly(channel);
      log.debug("uid {}: {}", uid, e.toString());
      return false;
    }
  }

  /** Gives a uid back (the sandbox has exited); a user not from the range is ignored. */
  void release(HostUser user) {
    if (user == null || user.uid() < range.first() || user.uid() > range.last()) {
      return;
    }
    FileLock lock = LOCKS.remove(user.uid());
    if (lock != null) {
      closeQuietly(lock.channel());
      TAKEN.remove(user.uid());
    }
  }

  private static void closeQuietly(FileChannel c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        log.debug("closing a uid lock", e);
      }
    }
  }

  /**
   * What on this host already uses an id of the range: a user or group (local files only), or a
   * subordinate id range (rootless containers map their users there).
   */
  static Optional<String> collision(UidRange range) {
    return collision(
        range,
        List.of(Path.of("/etc/passwd"), Path.of("/etc/group")),
        List.of(Path.of("/etc/subuid"), Path.of("/etc/subgid")));
  }

  /**
   * @param idFiles files in passwd or group format
   * @param rangeFiles files in subuid format
   */
  static Optional<String> collision(UidRange range, List<Path> idFiles, List<Path> rangeFiles) {
    for (Path file : idFiles) {
      for (String line : lines(file)) {
        String[] f = line.split(":");
        if (f.length > 2 && f[2].matches("[0-9]{1,10}")) {
          long id = Long.parseLong(f[2]);
          if (range.overlaps(id, id)) {
            return Optional.of("'" + f[0] + "' (id " + id + ") in " + file);
          }
        }
      }
    }
    for (Path file : rangeFiles) {
      for (String line : lines(file)) {
        String[] f = line.split(":");
        if (f.length == 3 && f[1].matches("[0-9]{1,10}") && f[2].matches("[0-9]{1,10}")) {
          long first = Long.parseLong(f[1]);
          long last = first + Long.parseLong(f[2]) - 1;
          if (range.overlaps(first, last)) {
            return Optional.of("the ids " + first + "-" + last + " of '" + f[0] + "' in " + file);
          }
        }
      }
    }
    return Optional.empty();
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      return List.of();
    }
  }
}

package dev.pysandbox.core.environments;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.util.Pause;
import dev.pysandbox.util.RandomIds;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file locks that let servers sharing a data directory share its environments, under {@code
 * <envs>/.locks/}: {@code <key>.build}, held exclusively while the key is built; {@code <key>.use},
 * held shared while a sandbox has the environment and taken exclusively to remove it; {@code
 * <key>.used}, whose time is when it was last given to a sandbox. Within this process one shared
 * use lock per key is counted for all of its sandboxes.
 */
final class EnvironmentLocks implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EnvironmentLocks.class);
  private static final long POLL_MILLIS = 500;

  /** A key's build lock, held until closed. */
  interface BuildLock extends AutoCloseable {
    @Override
    void close() throws IOException;
  }

  /** One key's shared use lock, held while any sandbox of this process has it. */
  private static final class Use {
    int count;
    FileChannel channel;
    FileLock lock;
  }

  private final Path root;
  private final Path locks;
  private final Clock clock;
  private final Map<String, Use> inUse = new ConcurrentHashMap<>();

  /**
   * @param root the directory that holds the environments
   */
  EnvironmentLocks(Path root, Clock clock) {
    this.root = root;
    this.locks = root.resolve(".locks");
    this.clock = clock;
  }

  /**
   * Takes the build lock of {@code key}, waiting for another server's build of it at most {@code
   * waitSeconds}.
   *
   * @throws PysandboxException {@code environment_failed} (retryable) when the wait is over
   */
  BuildLock awaitBuild(String key, long waitSeconds, Consumer<String> progress) throws IOException {
    long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(waitSeconds);
    Files.createDirectories(locks);
    EnvironmentFiles.setMode(root, "rwxr-xr-x");
    EnvironmentFiles.setMode(locks, "rwx------");
    FileChannel ch =
        FileChannel.open(
            locks.resolve(key + ".build"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    try {
      FileLock lock = ch.tryLock();
      boolean told = false;
      while (lock == null) {
        if (!told) {
          progress.accept("waiting for another server's build of environment " + key);
          told = true;
        }
        if (System.nanoTime() - waitUntil > 0) {
          throw new PysandboxException(
              ErrorCode.ENVIRONMENT_FAILED,
              "environment "
                  + key
                  + " is being built by another server sharing this data directory, and it did"
                  + " not finish within env_build_timeout",
              true);
        }
        Pause.millis(POLL_MILLIS);
        lock = ch.tryLock();
      }
      FileLock held = lock;
      return () -> {
        try (ch) {
          held.release();
        }
      };
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  /**
   * Marks the environment in use by one sandbox until the returned handle is closed: {@link
   * #remove} never removes it meanwhile, nor does another server's.
   */
  AutoCloseable use(String key) {
    synchronized (inUse) {
      Use u = inUse.computeIfAbsent(key, k -> new Use());
      if (u.count == 0) {
        try {
          Files.createDirectories(locks);
          u.channel =
              FileChannel.open(
                  locks.resolve(key + ".use"),
                  StandardOpenOption.CREATE,
                  StandardOpenOption.READ,
                  StandardOpenOption.WRITE);
          u.lock = u.channel.lock(0, Long.MAX_VALUE, true);
        } catch (IOException e) {
          log.warn("environment {}: cannot take its use lock ({})", key, e.toString());
        }
      }
      u.count++;
    }
    touch(key);
    boolean[] closed = new boolean[1];
    return () -> {
      synchronized (inUse) {
        if (closed[0]) {
          return;
        }
        closed[0] = true;
        Use u = inUse.get(key);
        if (u != null && --u.count == 0) {
          inUse.remove(key);
          try {
            if (u.channel != null) {
              u.channel.close();
            }
          } catch (IOException e) {
            log.debug("environment {}: closing its use lock", key, e);
          }
        }
      }
    };
  }

  /** Records that the environment was given to a sandbox now. */
  void touch(String key) {
    Path used = locks.resolve(key + ".used");
    try {
      if (!Files.exists(used)) {
        Files.createDirectories(locks);
        Files.createFile(used);
      }
      Files.setLastModifiedTime(used, FileTime.from(clock.instant()));
    } catch (IOException e) {
      log.debug("environment {}: cannot mark it used", key, e);
    }
  }

  /** When the environment was last given to a sandbox, or {@code otherwise} when never. */
  Instant lastUsed(String key, Instant otherwise) {
    try {
      return Files.getLastModifiedTime(locks.resolve(key + ".used")).toInstant();
    } catch (IOException e) {
      return otherwise;
    }
  }

  /**
   * Whether a sandbox uses it now, not counting {@code spares} uses of this process (spare
   * sandboxes started ahead of a run: no run has them yet). While this process holds it only for
   * spares, another server's use cannot be seen (the lock is ours) and counts as none.
   */
  boolean inUse(String key, int spares) {
    synchronized (inUse) {
      Use mine = inUse.get(key);
      if (mine != null) {
        return mine.count > spares;
      }
      try (FileChannel ch =
          FileChannel.open(
              locks.resolve(key + ".use"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        FileLock l = ch.tryLock();
        if (l == null) {
          return true;
        }
        l.release();
        return false;
      } catch (IOException e) {
        return true;
      }
    }
  }

  /**
   * Removes the environment at {@code dir} (or with {@code dryRun} only says it would) unless a
   * sandbox here or of another server uses it. Holds its use lock exclusively while it is moved
   * aside, so no sandbox can take it meanwhile.
   *
   * @return whether it was removed (or would be)
   */
  boolean remove(String key, Path dir, boolean dryRun) {
    synchronized (inUse) {
      if (inUse.containsKey(key)) {
        return false;
      }
      try (FileChannel ch =
          FileChannel.open(
              locks.resolve(key + ".use"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        FileLock l = ch.tryLock();
        if (l == null) {
          return false; // another server's sandbox has it
        }
        try {
          if (!dryRun) {
            Path aside = root.resolve(".trash-" + key + "-" + RandomIds.hex(6));
            Files.move(dir, aside, StandardCopyOption.ATOMIC_MOVE);
            EnvironmentFiles.deleteTree(aside);
            Files.deleteIfExists(locks.resolve(key + ".used"));
          }
          return true;
        } finally {
          l.release();
        }
      } catch (NoSuchFileException e) {
        return false; // removed meanwhile
      } catch (IOException e) {
        log.warn("environment {}: cannot remove it ({})", key, e.toString());
        return false;
      }
    }
  }

  @Override
  public void close() {
    synchronized (inUse) {
      for (Use u : inUse.values()) {
        try {
          if (u.channel != null) {
            u.channel.close();
          }
        } catch (IOException e) {
          log.debug("closing a use lock", e);
        }
      }
      inUse.clear();
    }
  }
}

package dev.pysandbox.core.host;

import dev.pysandbox.util.RandomIds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Tells live server processes from dead ones without trusting anything they wrote: each live server
 * holds an exclusive lock on {@code instances/<id>.lock}, and the kernel drops the lock when the
 * process dies, however it dies. Several servers (an MCP server and a CLI run, say) can share one
 * data directory.
 */
public final class InstanceRegistry implements AutoCloseable {
  private final Path dir;
  private final String id;
  private final FileChannel channel;
  private final FileLock lock;

  public InstanceRegistry(Path dir) {
    this.dir = dir;
    this.id = RandomIds.hex(4);
    try {
      Files.createDirectories(dir);
      channel = FileChannel.open(file(id), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      lock = channel.lock();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot register this server in " + dir, e);
    }
  }

  /** This server's id: 8 hex digits. */
  public String id() {
    return id;
  }

  /** True when the instance is this one or another live server process. */
  public boolean isAlive(String instanceId) {
    if (id.equals(instanceId)) {
      return true;
    }
    if (instanceId == null || !instanceId.matches("[0-9a-f]{8}")) {
      return false;
    }
    Path f = file(instanceId);
    if (!Files.exists(f)) {
      return false;
    }
    try (FileChannel c = FileChannel.open(f, StandardOpenOption.WRITE)) {
      FileLock l = c.tryLock();
      if (l == null) {
        return true;
      }
      l.release();
      Files.deleteIfExists(f);
      return false;
    } catch (OverlappingFileLockException e) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private Path file(String instanceId) {
    return dir.resolve(instanceId + ".lock");
  }

  @Override
  public void close() {
    try {
      lock.release();
      channel.close();
      Files.deleteIfExists(file(id));
    } catch (IOException e) {
      // the lock dies with the process anyway
    }
  }
}

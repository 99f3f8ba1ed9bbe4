package dev.pysandbox.store.jdbc;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.flywaydb.core.Flyway;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * One SQLite file: connections with the store's PRAGMAs (every one, Flyway's too, waits for locks
 * instead of failing at once), and migrations that wait for each other. Servers starting together
 * on a new data directory used to migrate at the same time, and one failed with SQLITE_BUSY.
 */
final class SqliteDatabase {
  static final int BUSY_TIMEOUT_MILLIS = 10_000;
  private static final long MIGRATION_WAIT_SECONDS = 120;
  private static final long LOCK_POLL_MILLIS = 20;
  // File locks belong to the whole process (a second lock from this JVM throws
  // OverlappingFileLockException), so threads of one JVM also queue here.
  private static final ReentrantLock MIGRATING = new ReentrantLock();

  private final Path file;
  private final SQLiteDataSource dataSource;

  SqliteDatabase(Path file) {
    this.file = file.toAbsolutePath();
    SQLiteConfig config = new SQLiteConfig();
    config.setBusyTimeout(BUSY_TIMEOUT_MILLIS);
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    config.setSynchronous(SQLiteConfig.SynchronousMode.NORMAL);
    this.dataSource = new SQLiteDataSource(config);
    dataSource.setUrl("jdbc:sqlite:" + this.file);
  }

  Path file() {
    return file;
  }

  /** A new connection with the busy timeout, WAL journal and NORMAL synchronous set. */
  Connection connect() throws SQLException {
    return dataSource.getConnection();
  }

  /**
   * Creates the directory and applies pending migrations, holding {@code <file>.migrate.lock} so
   * that other processes (and threads) opening the same database wait instead of racing.
   */
  void migrate() throws IOException, InterruptedException {
    Files.createDirectories(file.getParent());
    Path lockFile = file.resolveSibling(file.getFileName() + ".migrate.lock");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(MIGRATION_WAIT_SECONDS);
    if (!MIGRATING.tryLock(MIGRATION_WAIT_SECONDS, TimeUnit.SECONDS)) {
      throw new IOException(
          "another thread of this process has been migrating a run store for over "
              + MIGRATION_WAIT_SECONDS
              + " s");
    }
    try (FileChannel channel =
        FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      FileLock lock = lockWithin(channel, lockFile, deadline);
      try {
        Flyway.configure()
            .dataSource(dataSource)
            .locations("classpath:db/migration")
            .loggers("slf4j")
            .load()
            .migrate();
      } finally {
        lock.release();
      }
    } finally {
      MIGRATING.unlock();
    }
  }

  private static FileLock lockWithin(FileChannel channel, Path lockFile, long deadline)
      throws IOException, InterruptedException {
    long start = System.nanoTime();
    while (true) {
      FileLock lock = channel.tryLock();
      if (lock != null) {
        return lock;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IOException(
            "another process has held "
                + lockFile
                + " (migrating the run store) for "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)
                + " ms");
      }
      Thread.sleep(LOCK_POLL_MILLIS);
    }
  }
}

package dev.pysandbox.store.jdbc;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.util.NativeLibraries;
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
import org.flywaydb.core.api.FlywayException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;
import org.sqlite.util.OSInfo;

/**
 * One SQLite file: connections with the store's PRAGMAs (every one, Flyway's too, waits for locks
 * instead of failing at once), and migrations that wait for each other. Servers starting together
 * on a new data directory used to migrate at the same time, and one failed with SQLITE_BUSY.
 */
final class SqliteDatabase {
  /**
   * The highest migration in {@code db/migration}: a store already there is not handed to Flyway
   * (which costs about 0.5 s of CPU at start to find nothing to do): a command that only looks
   * reads the history, a server also checks every applied script's checksum ({@link
   * AppliedMigrations}). A test keeps it in step.
   */
  static final int LATEST_VERSION = 15;

  static final int BUSY_TIMEOUT_MILLIS = 10_000;
  private static final long MIGRATION_WAIT_SECONDS = 120;
  private static final long LOCK_POLL_MILLIS = 20;
  // File locks belong to the whole process (a second lock from this JVM throws
  // OverlappingFileLockException), so threads of one JVM also queue here.
  private static final ReentrantLock MIGRATING = new ReentrantLock();

  private static final Logger log = LoggerFactory.getLogger(SqliteDatabase.class);

  private final Path file;
  private final StoreFiles files;
  private final SQLiteDataSource dataSource;

  SqliteDatabase(Path file) {
    this.file = file.toAbsolutePath();
    this.files = new StoreFiles(this.file);
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

  /** Its files, as a store checks them before each call. */
  StoreFiles files() {
    return files;
  }

  /**
   * Opens the database at {@code file} for one store: migrated first unless {@code lookOnly} and
   * already current (see {@link #isCurrent}), then handed to {@code build}. Every store of a data
   * directory (runs, API keys) opens the same file this way, so they share one schema history.
   *
   * @param what the store's name in messages ("run store")
   * @throws PysandboxException {@code store_unavailable} when the database cannot be opened
   */
  static <T> T open(
      Path file,
      boolean lookOnly,
      String what,
      CachedConnection.SqlFunction<SqliteDatabase, T> build) {
    SqliteDatabase db = new SqliteDatabase(file);
    try {
      if (!(lookOnly && db.isCurrent(false))) {
        db.migrate();
      }
      return build.apply(db);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(
          ErrorCode.STORE_UNAVAILABLE, "interrupted while opening the " + what + " " + file, e);
    } catch (IOException | SQLException | FlywayException e) {
      // Only what opening a database can meet is store_unavailable; anything else is a bug and
      // stays what it is. Migrating opens and closes its own connections: none is left open here.
      throw new PysandboxException(
          ErrorCode.STORE_UNAVAILABLE,
          "cannot open the " + what + " " + file + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * A new connection with the busy timeout, WAL journal and NORMAL synchronous set.
   *
   * @throws StoreFiles.Unwritable when a file of the database cannot be written (never opened then)
   */
  Connection connect() throws SQLException {
    files.requireWritable();
    return dataSource.getConnection();
  }

  /**
   * Creates the directory and applies pending migrations, holding {@code <file>.migrate.lock} so
   * that other processes (and threads) opening the same database wait instead of racing; a store
   * already current with this build's scripts is left to itself, without Flyway.
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
        // Read under the lock: a store another process is creating is not looked at meanwhile
        // (a connection opened then could meet its change to WAL and fail with SQLITE_BUSY).
        if (isCurrent(true)) {
          return;
        }
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

  /**
   * Whether the database exists and every migration up to {@link #LATEST_VERSION} has been applied
   * with success (read without Flyway, and without creating anything); with {@code checkScripts},
   * also with the scripts this build carries.
   */
  boolean isCurrent(boolean checkScripts) {
    if (!Files.isRegularFile(file)) {
      return false;
    }
    try (Connection c = connect()) {
      return AppliedMigrations.current(c, checkScripts);
    } catch (SQLException e) {
      // No history table yet, or a database being created: Flyway decides, under the lock.
      return false;
    }
  }

  /**
   * Loads SQLite's native library from {@code dir} (written there once, named by its content)
   * instead of letting the driver unpack it to a new temporary file on every start. Does nothing
   * once the driver is loaded, when the JVM was told where the library is, or when the jar holds
   * none for this platform (the driver then does as it always does).
   */
  static synchronized void useNativeDirectory(Path dir) {
    if (System.getProperty("org.sqlite.lib.path") != null) {
      return;
    }
    String resource =
        "/org/sqlite/native/" + OSInfo.getNativeLibFolderPathForCurrentOS() + "/libsqlitejdbc.so";
    try {
      NativeLibraries.install(SQLiteConfig.class, resource, dir, "libsqlitejdbc")
          .ifPresent(
              lib -> {
                System.setProperty("org.sqlite.lib.path", lib.getParent().toString());
                System.setProperty("org.sqlite.lib.name", lib.getFileName().toString());
              });
    } catch (IOException e) {
      log.debug("SQLite's native library stays with the driver: {}", e.toString());
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

package dev.pysandbox.store.jdbc;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.util.DiskFullException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.AccessMode;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.List;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * The files of one SQLite database as the store must find them before each use: the database, its
 * {@code -wal} and {@code -shm} and their directory writable. SQLite maps {@code -shm} into memory;
 * a write to a mapped page of a file that became immutable ({@code chattr +i}) or that another
 * connection had to open read-only is a SIGBUS, which kills the JVM with every session (issue 23).
 * So a store whose files are not writable refuses the call ({@code store_unavailable}, naming the
 * file and why) before SQLite is asked anything, and works again on the first call after they are
 * writable. Closing a connection is an SQLite call too (it checkpoints): it waits as well.
 *
 * <p>Checked with {@code access(2)}, never by opening: closing any descriptor of a file releases
 * every POSIX lock the process holds on it, SQLite's included. What is left is the time between the
 * check and the statement (microseconds): a file made unwritable exactly then can still end the
 * process. Also names a full disk: {@code SQLITE_FULL} is {@code disk_full}.
 */
final class StoreFiles {
  /** For connections that are not to a file of ours: nothing to check. */
  static final StoreFiles NONE = new StoreFiles(null);

  private final Path database;

  StoreFiles(Path database) {
    this.database = database;
  }

  /** Thrown before a statement when a file of the database cannot be written. */
  static final class Unwritable extends SQLException {
    private static final long serialVersionUID = 1L;

    Unwritable(String message) {
      super(message);
    }
  }

  /**
   * Checks that the database's directory, the database and its {@code -wal} and {@code -shm} (those
   * of them that exist) can be written by this process.
   *
   * @throws Unwritable naming the first that cannot, and why
   */
  void requireWritable() throws Unwritable {
    if (database == null) {
      return;
    }
    Path dir = database.getParent();
    for (Path p :
        List.of(
            dir,
            database,
            dir.resolve(database.getFileName() + "-wal"),
            dir.resolve(database.getFileName() + "-shm"))) {
      if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
        continue; // made when needed; a directory that cannot be made says so then
      }
      try {
        p.getFileSystem().provider().checkAccess(p, AccessMode.WRITE);
      } catch (IOException e) {
        throw new Unwritable(
            p
                + " cannot be written ("
                + reason(e)
                + "): the store is not used until it can (SQLite would end the server when it"
                + " writes to its shared memory); make it writable again (chattr -i, a read-write"
                + " mount, its owner) and the next call uses it");
      }
    }
  }

  /** Whether {@link #requireWritable()} passes now. */
  boolean writable() {
    try {
      requireWritable();
      return true;
    } catch (Unwritable e) {
      return false;
    }
  }

  private static String reason(IOException e) {
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      String r = f.getReason();
      return r.equals("Operation not permitted") ? r + ": immutable?" : r;
    }
    return e.getMessage();
  }

  /**
   * A failed statement as the error callers get: {@code disk_full} for {@code SQLITE_FULL} (naming
   * the file system), {@code store_unavailable} otherwise.
   *
   * @param what what failed ("run store write failed")
   * @param recovery appended to the message (what was done about the connection)
   */
  PysandboxException failure(String what, SQLException e, String recovery) {
    if (isFull(e)) {
      return new PysandboxException(
          ErrorCode.DISK_FULL,
          what
              + ": the disk that holds the database is full ("
              + (database == null ? "" : database + " on " + DiskFullException.describe(database))
              + "; "
              + e.getMessage()
              + "); nothing was written; free space and try again"
              + recovery,
          e);
    }
    return new PysandboxException(
        ErrorCode.STORE_UNAVAILABLE, what + ": " + e.getMessage() + recovery, e);
  }

  private static boolean isFull(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLiteException s
          && (s.getResultCode().code & 0xff) == SQLiteErrorCode.SQLITE_FULL.code) {
        return true;
      }
    }
    return false;
  }
}

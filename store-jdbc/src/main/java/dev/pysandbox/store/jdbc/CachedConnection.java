package dev.pysandbox.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One JDBC connection used under a lock, with its prepared statements cached (parsing SQL costs
 * more than running the store's small statements). After a failure the failed statement is dropped
 * and, when the connection no longer answers, the connection too, so that the store works again
 * once the cause (a full disk, say) is gone instead of failing until a restart. Before each call
 * the database's files are checked ({@link StoreFiles}): while they cannot be written the
 * connection is neither used nor closed (both would have SQLite write to its shared memory), and it
 * is used again once they can.
 */
final class CachedConnection implements AutoCloseable {
  @FunctionalInterface
  interface SqlConsumer<T> {
    void accept(T t) throws SQLException;
  }

  @FunctionalInterface
  interface SqlFunction<T, R> {
    R apply(T t) throws SQLException;
  }

  @FunctionalInterface
  interface SqlSupplier<T> {
    T get() throws SQLException;
  }

  private static final int VALIDATION_TIMEOUT_SECONDS = 2;

  private final String name;
  private final SqlSupplier<Connection> connector;
  private final StoreFiles files;
  private final ReentrantLock lock = new ReentrantLock();
  // Keyed by SQL text, so callers bind every value: a value pasted into the text leaks a statement.
  private final Map<String, PreparedStatement> prepared = new HashMap<>();
  // Null after a failure left it unusable (the next call opens a new one), or after close().
  private Connection connection;
  private boolean closed;

  /**
   * @param name what the connection serves, for error messages ("run store")
   * @param connector opens a connection with every setting needed; called now, and again whenever a
   *     failure left the connection unusable
   */
  CachedConnection(String name, SqlSupplier<Connection> connector) throws SQLException {
    this(name, connector, StoreFiles.NONE);
  }

  /**
   * @param files checked before every call: a database whose files cannot be written is not used
   *     (its connection is closed, the call fails) until they can
   */
  CachedConnection(String name, SqlSupplier<Connection> connector, StoreFiles files)
      throws SQLException {
    this.name = name;
    this.connector = connector;
    this.files = files;
    files.requireWritable();
    this.connection = connector.get();
  }

  /** Runs an insert, update or delete; returns the number of rows changed. */
  int write(String sql, SqlConsumer<PreparedStatement> bind) {
    return run(
        sql,
        "write",
        ps -> {
          bind.accept(ps);
          return ps.executeUpdate();
        });
  }

  /** Runs a query and maps its result set, which is closed afterwards. */
  <R> R read(String sql, SqlConsumer<PreparedStatement> bind, SqlFunction<ResultSet, R> map) {
    return run(
        sql,
        "read",
        ps -> {
          bind.accept(ps);
          try (ResultSet rs = ps.executeQuery()) {
            return map.apply(rs);
          }
        });
  }

  /** The statements of one transaction ({@link #transaction}), on its connection. */
  interface Tx {
    int write(String sql, SqlConsumer<PreparedStatement> bind) throws SQLException;

    <R> R read(String sql, SqlConsumer<PreparedStatement> bind, SqlFunction<ResultSet, R> map)
        throws SQLException;
  }

  /**
   * Runs {@code body} as one transaction: committed when it returns, rolled back when it throws. To
   * take the database's write lock before reading anything (so that what is read is still true when
   * written), make the body's first statement a write. A failure drops the connection (the next
   * call opens a new one) and is {@code store_unavailable}. The files are checked before each
   * statement and before the commit, not once for the whole body: a body may take long (a niced
   * thread on a busy machine), and a file made unwritable meanwhile must not meet a write.
   */
  <R> R transaction(String what, SqlFunction<Tx, R> body) {
    lock.lock();
    try {
      files.requireWritable();
      Connection c = connection();
      c.setAutoCommit(false);
      try {
        R r =
            body.apply(
                new Tx() {
                  @Override
                  public int write(String sql, SqlConsumer<PreparedStatement> bind)
                      throws SQLException {
                    files.requireWritable();
                    PreparedStatement ps = statement(sql);
                    bind.accept(ps);
                    return ps.executeUpdate();
                  }

                  @Override
                  public <T> T read(
                      String sql,
                      SqlConsumer<PreparedStatement> bind,
                      SqlFunction<ResultSet, T> map)
                      throws SQLException {
                    files.requireWritable();
                    PreparedStatement ps = statement(sql);
                    bind.accept(ps);
                    try (ResultSet rs = ps.executeQuery()) {
                      return map.apply(rs);
                    }
                  }
                });
        files.requireWritable();
        c.commit();
        return r;
      } catch (SQLException | RuntimeException e) {
        try {
          c.rollback();
        } catch (SQLException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      } finally {
        if (connection == c) {
          c.setAutoCommit(true);
        }
      }
    } catch (SQLException e) {
      closeAll();
      throw files.failure(
          name + " " + what + " failed", e, " (the next call opens a new connection)");
    } finally {
      lock.unlock();
    }
  }

  int cachedStatementCount() {
    lock.lock();
    try {
      return prepared.size();
    } finally {
      lock.unlock();
    }
  }

  private <R> R run(String sql, String kind, SqlFunction<PreparedStatement, R> action) {
    lock.lock();
    try {
      files.requireWritable();
      return action.apply(statement(sql));
    } catch (SQLException e) {
      String recovery = recover(sql);
      throw files.failure(name + " " + kind + " failed", e, recovery);
    } finally {
      lock.unlock();
    }
  }

  private Connection connection() throws SQLException {
    if (connection == null) {
      if (closed) {
        throw new SQLException("the " + name + " is closed");
      }
      connection = connector.get();
    }
    return connection;
  }

  private PreparedStatement statement(String sql) throws SQLException {
    PreparedStatement ps = prepared.get(sql);
    if (ps == null) {
      ps = connection().prepareStatement(sql);
      prepared.put(sql, ps);
    } else {
      ps.clearParameters();
    }
    return ps;
  }

  /**
   * Forgets the statement that failed: the SQLite driver leaves it unusable ("statement is not
   * executing" on every later call). Drops the connection too when it no longer answers, so that
   * the next call opens a new one with the same settings.
   *
   * @return what was done, to append to the error message
   */
  private String recover(String sql) {
    if (!files.writable()) {
      return ""; // nothing is touched now; the next call tells, once the files can be written
    }
    closeQuietly(prepared.remove(sql));
    if (connection == null || usable(connection)) {
      return "";
    }
    closeAll();
    return " (the connection was unusable; the next call opens a new one)";
  }

  private static boolean usable(Connection c) {
    try {
      return !c.isClosed() && c.isValid(VALIDATION_TIMEOUT_SECONDS);
    } catch (SQLException e) {
      return false;
    }
  }

  /**
   * Closes the statements and the connection, unless the database's files cannot be written: then
   * closing is left for later (a close checkpoints, and SQLite's write to its shared memory would
   * be a SIGBUS), and the next call, once they can, finds out whether the connection still answers.
   */
  private void closeAll() {
    if (!files.writable()) {
      return;
    }
    prepared.values().forEach(CachedConnection::closeQuietly);
    prepared.clear();
    closeQuietly(connection);
    connection = null;
  }

  private static void closeQuietly(AutoCloseable resource) {
    if (resource == null) {
      return;
    }
    try {
      resource.close();
    } catch (Exception e) {
      // failing or closing already; nothing more to report
    }
  }

  @Override
  public void close() {
    lock.lock();
    try {
      closeAll(); // left open when the files cannot be written: the process ends it
      closed = true;
    } finally {
      lock.unlock();
    }
  }
}

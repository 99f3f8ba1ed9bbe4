package dev.pysandbox.app;

import dev.pysandbox.config.DataLayout;
import dev.pysandbox.store.ApiKeys;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.jdbc.JdbcApiKeys;
import dev.pysandbox.store.jdbc.JdbcRunStore;
import java.time.Clock;

/**
 * Opens the stores of a data directory: the one place that knows they are a SQLite database reached
 * through JDBC, so that the core and the faces know {@link RunStore} and {@link ApiKeys} only.
 * Another store (PostgreSQL, say) is chosen here when it comes.
 */
public final class StoreFactory {
  private StoreFactory() {}

  /**
   * Opens the run history of {@code layout}'s data directory, creating and migrating its database
   * unless {@code lookOnly}.
   *
   * @param clock the time the store stamps rows with (the core's time source)
   * @param lookOnly use a database already at the latest migration without migrating it (a command
   *     that only looks)
   * @throws dev.pysandbox.api.PysandboxException {@code store_unavailable} when it cannot be opened
   */
  public static RunStore openRunStore(DataLayout layout, Clock clock, boolean lookOnly) {
    JdbcRunStore.useNativeDirectory(layout.nativeDir());
    return JdbcRunStore.openSqlite(layout.database(), clock, lookOnly);
  }

  /**
   * Checks, without opening anything, that the database of {@code layout}'s data directory can be
   * written (the directory, the database and its {@code -wal} and {@code -shm} where they exist): a
   * server whose store cannot be written fails at start with one line instead of serving calls that
   * all fail.
   *
   * @throws dev.pysandbox.api.PysandboxException {@code store_unavailable} naming the file and why
   */
  public static void requireWritable(DataLayout layout) {
    JdbcRunStore.requireWritable(layout.database());
  }

  /**
   * Opens the API keys of {@code layout}'s data directory; they live next to the run history, so
   * every process sharing the directory sees the same keys.
   *
   * @param lookOnly as for {@link #openRunStore}; a database not yet at the latest migration is
   *     migrated either way
   * @throws dev.pysandbox.api.PysandboxException {@code store_unavailable} when it cannot be opened
   */
  public static ApiKeys openApiKeys(DataLayout layout, Clock clock, boolean lookOnly) {
    JdbcRunStore.useNativeDirectory(layout.nativeDir());
    return JdbcApiKeys.openSqlite(layout.database(), clock, lookOnly);
  }
}

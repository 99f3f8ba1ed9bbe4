package dev.pysandbox.store.jdbc;

import dev.pysandbox.Fast;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.SessionRowsContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

@Fast
class SqliteSessionRowsTest extends SessionRowsContract {
  @TempDir Path dir;

  @Override
  protected RunStore newStore() {
    return JdbcRunStore.openSqlite(dir.resolve("pysandbox.db"));
  }
}

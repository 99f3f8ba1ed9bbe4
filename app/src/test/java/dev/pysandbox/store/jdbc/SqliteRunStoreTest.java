package dev.pysandbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import dev.pysandbox.Fast;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.RunStoreContract;
import dev.pysandbox.store.RunStoreContractAccess;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Fast
class SqliteRunStoreTest extends RunStoreContract {
  @TempDir Path dir;

  @Override
  protected RunStore newStore() {
    return JdbcRunStore.openSqlite(dir.resolve("pysandbox.db"));
  }

  @Test
  void reopening_keepsRunsAndDoesNotMigrateTwice() {
    store.insert(RunStoreContractAccess.running("run_keep"), "aaaaaaaa");
    store.close();
    store = newStore();
    assertThat(store.get("run_keep", false).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);
  }

  @Test
  void list_ofManyDifferentPages_doesNotGrowTheStatementCache() {
    // Regression: LIMIT and OFFSET were pasted into the SQL that keys the cache, leaking one
    // open statement per page ever shown.
    JdbcRunStore jdbc = (JdbcRunStore) store;
    for (int i = 0; i < 3; i++) {
      jdbc.insert(RunStoreContractAccess.running("run_p" + i), "aaaaaaaa");
    }
    jdbc.list("local", new RunQuery(1, 0, null, null));
    int cached = jdbc.cachedStatementCount();
    for (int page = 1; page <= 50; page++) {
      assertThat(jdbc.list("local", new RunQuery(1 + page % 7, page, null, null)).total())
          .isEqualTo(3);
    }
    assertThat(jdbc.cachedStatementCount()).isEqualTo(cached);
  }

  @Test
  void aConnectionThatDied_isReplacedOnTheNextCall_withTheSameSettings() throws Exception {
    SqliteDatabase db = new SqliteDatabase(dir.resolve("pysandbox.db"));
    List<Connection> opened = new ArrayList<>();
    try (JdbcRunStore own =
        new JdbcRunStore(
            () -> {
              Connection c = db.connect();
              opened.add(c);
              return c;
            },
            java.time.Clock.systemUTC())) {
      own.insert(RunStoreContractAccess.running("run_c1"), "aaaaaaaa");
      opened.get(0).close();
      assertThatExceptionOfType(PysandboxException.class)
          .isThrownBy(() -> own.insert(RunStoreContractAccess.running("run_c2"), "aaaaaaaa"))
          .satisfies(e -> assertThat(e.code()).isEqualTo(ErrorCode.STORE_UNAVAILABLE))
          .withMessageContaining("the next call opens a new one");

      own.insert(RunStoreContractAccess.running("run_c2"), "aaaaaaaa");
      assertThat(own.get("run_c2", false)).isPresent();
      assertThat(opened).hasSize(2);
      assertThat(pragma(opened.get(1), "busy_timeout"))
          .isEqualTo(String.valueOf(SqliteDatabase.BUSY_TIMEOUT_MILLIS));
      assertThat(pragma(opened.get(1), "journal_mode")).isEqualTo("wal");
      assertThat(pragma(opened.get(1), "synchronous")).as("NORMAL").isEqualTo("1");
    }
  }

  private static String pragma(Connection c, String name) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("PRAGMA " + name)) {
      rs.next();
      return rs.getString(1);
    }
  }
}

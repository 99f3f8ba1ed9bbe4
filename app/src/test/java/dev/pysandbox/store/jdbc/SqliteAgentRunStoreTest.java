package dev.pysandbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.store.AgentRunStoreContract;
import dev.pysandbox.store.RunStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Fast
class SqliteAgentRunStoreTest extends AgentRunStoreContract {
  @TempDir Path dir;

  @Override
  protected RunStore newStore(Clock clock) {
    return JdbcRunStore.openSqlite(dir.resolve("pysandbox.db"), clock);
  }

  /**
   * A data directory of the version before agent runs (V14) opens: V15 is applied on top of its
   * runs, which stay, and the start-up fast path then sees the whole history as current.
   */
  @Test
  void aStoreAtVersion14_getsTheAgentRunTables_keepsItsRuns_andIsCurrentAfterwards()
      throws Exception {
    Path db = dir.resolve("v14.db");
    Flyway.configure()
        .dataSource("jdbc:sqlite:" + db, "", "")
        .locations("classpath:db/migration")
        .target("14")
        .load()
        .migrate();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
        Statement st = c.createStatement()) {
      st.executeUpdate(
          "INSERT INTO runs (id, instance_id, status, code, code_hash, timeout_seconds,"
              + " created_at, tenant) VALUES ('run_old', 'aaaaaaaa', 'succeeded', 'x', '"
              + "0".repeat(64)
              + "', 30, 1000, 't1')");
    }
    SqliteDatabase old = new SqliteDatabase(db);
    assertThat(old.isCurrent(false)).as("at version 14").isFalse();

    try (JdbcRunStore store = JdbcRunStore.openSqlite(db)) {
      assertThat(store.get("run_old", false)).isPresent();
      store.agentRuns().insert(running("agr_new", "t1", 2_000), "aaaaaaaa");
      assertThat(store.agentRuns().get("t1", "agr_new").orElseThrow().status())
          .isEqualTo(AgentRunStatus.RUNNING);
    }

    assertThat(old.isCurrent(true)).as("every script applied, this build's").isTrue();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT COUNT(*), MAX(CAST(version AS INTEGER)) FROM flyway_schema_history"
                    + " WHERE version IS NOT NULL AND success = 1")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getInt(1)).isEqualTo(SqliteDatabase.LATEST_VERSION);
      assertThat(rs.getInt(2)).isEqualTo(15);
    }
    try (JdbcRunStore look = JdbcRunStore.openSqlite(db, Clock.systemUTC(), true)) {
      assertThat(look.agentRuns().get("t1", "agr_new")).isPresent();
    }
  }

  @Test
  void listingManyPages_doesNotGrowTheStatementCache() {
    // The cursor and the limit are bound, never pasted into the SQL that keys the cache.
    for (int i = 0; i < 5; i++) {
      agentRuns.insert(running("agr_" + i, "t1", 1_000 + i), "aaaaaaaa");
    }
    JdbcRunStore jdbc = (JdbcRunStore) store;
    String cursor = agentRuns.list("t1", 1, null, null).nextCursor();
    agentRuns.list("t1", 1, cursor, null);
    int cached = jdbc.cachedStatementCount();
    for (int limit = 1; limit <= 3; limit++) {
      cursor = null;
      do {
        cursor = agentRuns.list("t1", limit, cursor, null).nextCursor();
      } while (cursor != null);
    }
    assertThat(jdbc.cachedStatementCount()).isEqualTo(cached);
  }
}

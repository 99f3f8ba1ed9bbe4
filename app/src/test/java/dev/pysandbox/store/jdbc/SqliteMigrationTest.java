package dev.pysandbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ArtifactChange;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.KillReason;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A store written by an older version opens, and its runs read back as they were written. */
@Fast
class SqliteMigrationTest {
  @TempDir Path dir;

  @Test
  void runsRecordedBeforeSnakeCase_keepTheirArtifacts_andNewOnesAreWrittenInTheWireForm()
      throws Exception {
    Path db = dir.resolve("pysandbox.db");
    Flyway.configure()
        .dataSource("jdbc:sqlite:" + db, "", "")
        .locations("classpath:db/migration")
        .target("3")
        .load()
        .migrate();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
        Statement st = c.createStatement()) {
      st.executeUpdate(
          "INSERT INTO runs (id, instance_id, status, code, code_hash, timeout_seconds,"
              + " created_at, kill_reason, artifacts_json) VALUES ('run_old', 'aaaaaaaa',"
              + " 'failed', 'x', '"
              + "0".repeat(64)
              + "', 30, 1000, 'disk_quota', '[{\"path\":\"a.csv\",\"sizeBytes\":4,"
              + "\"sha256\":\"ab\",\"mediaType\":\"text/csv\",\"change\":\"created\"},"
              + "{\"path\":\"sizeBytes\",\"sizeBytes\":0,\"sha256\":null,"
              + "\"mediaType\":\"application/octet-stream\",\"change\":\"deleted\"}]')");
    }
    try (JdbcRunStore store = JdbcRunStore.openSqlite(db)) {
      var run = store.get("run_old", false).orElseThrow();
      assertThat(run.killReason()).isEqualTo(KillReason.DISK_QUOTA);
      assertThat(run.artifacts())
          .containsExactly(
              new Artifact("a.csv", 4, "ab", "text/csv", ArtifactChange.CREATED),
              new Artifact(
                  "sizeBytes", 0, null, "application/octet-stream", ArtifactChange.DELETED));
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT artifacts_json FROM runs WHERE id = 'run_old'")) {
      assertThat(rs.next()).isTrue();
      var stored = Json.mapper().readTree(rs.getString(1));
      assertThat(stored.get(0).has("size_bytes")).as(stored.toString()).isTrue();
      assertThat(stored.get(0).has("sizeBytes")).isFalse();
    }
  }

  @Test
  void latestVersion_isTheHighestMigrationShipped() throws Exception {
    // The migrations store-jdbc ships (the tests run from the checkout's root).
    int highest;
    try (var files =
        java.nio.file.Files.list(Path.of("store-jdbc/src/main/resources/db/migration"))) {
      highest =
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> n.matches("V\\d+__.*\\.sql"))
              .mapToInt(n -> Integer.parseInt(n.substring(1, n.indexOf("__"))))
              .max()
              .orElseThrow();
    }
    assertThat(SqliteDatabase.LATEST_VERSION).isEqualTo(highest);
  }

  @Test
  void aCurrentStore_isSeenAsCurrentWithoutFlyway_andAnOldOneIsNot() throws Exception {
    Path db = dir.resolve("current.db");
    SqliteDatabase fresh = new SqliteDatabase(db);
    assertThat(fresh.isCurrent(true)).as("no file yet").isFalse();
    assertThat(java.nio.file.Files.exists(db)).as("looking creates nothing").isFalse();
    fresh.migrate();
    assertThat(fresh.isCurrent(true)).isTrue();
    Path old = dir.resolve("old.db");
    Flyway.configure()
        .dataSource("jdbc:sqlite:" + old, "", "")
        .locations("classpath:db/migration")
        .target("3")
        .load()
        .migrate();
    SqliteDatabase three = new SqliteDatabase(old);
    assertThat(three.isCurrent(true)).as("at version 3").isFalse();
    three.migrate();
    assertThat(three.isCurrent(true)).isTrue();
  }

  /**
   * A server skips Flyway only when every applied script is this build's: the checksums recomputed
   * without Flyway are the ones Flyway stored, and one changed script, one missing row or one
   * failed migration sends the store back to Flyway.
   */
  @Test
  void theChecksumsWithoutFlyway_areFlywaysOwn_andAnyDifferenceIsNotCurrent() throws Exception {
    Path db = dir.resolve("sums.db");
    SqliteDatabase store = new SqliteDatabase(db);
    store.migrate();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
        Statement st = c.createStatement()) {
      try (var rs = st.executeQuery("SELECT script, checksum FROM flyway_schema_history")) {
        int rows = 0;
        while (rs.next()) {
          assertThat(AppliedMigrations.checksum(rs.getString(1)))
              .as(rs.getString(1))
              .isEqualTo(rs.getInt(2));
          rows++;
        }
        assertThat(rows).isEqualTo(SqliteDatabase.LATEST_VERSION);
      }
      st.executeUpdate(
          "UPDATE flyway_schema_history SET checksum = checksum + 1 WHERE version = '7'");
      assertThat(store.isCurrent(false)).as("looking only reads the versions").isTrue();
      assertThat(store.isCurrent(true)).as("a changed script").isFalse();
      st.executeUpdate(
          "UPDATE flyway_schema_history SET checksum = checksum - 1 WHERE version = '7'");
      assertThat(store.isCurrent(true)).isTrue();
      st.executeUpdate("UPDATE flyway_schema_history SET success = 0 WHERE version = '14'");
      assertThat(store.isCurrent(false)).as("a failed migration").isFalse();
      st.executeUpdate("UPDATE flyway_schema_history SET success = 1 WHERE version = '14'");
      st.executeUpdate("DELETE FROM flyway_schema_history WHERE version = '2'");
      assertThat(store.isCurrent(false)).as("a missing one").isFalse();
    }
    assertThat(AppliedMigrations.checksum("../V1__runs.sql")).isNull();
    assertThat(AppliedMigrations.checksum("V99__none.sql")).isNull();
  }

  @Test
  void lookingOnly_skipsFlywayOnACurrentStore_aServerStillValidates() throws Exception {
    Path db = dir.resolve("validated.db");
    JdbcRunStore.openSqlite(db).close();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
        Statement st = c.createStatement()) {
      st.executeUpdate("UPDATE flyway_schema_history SET checksum = 1 WHERE version = '1'");
    }
    try (JdbcRunStore look = JdbcRunStore.openSqlite(db, java.time.Clock.systemUTC(), true)) {
      assertThat(look.get("run_none", false)).isEmpty();
    }
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> JdbcRunStore.openSqlite(db))
        .hasMessageContaining("checksum mismatch");
  }
}

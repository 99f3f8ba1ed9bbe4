package dev.pysandbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.Fast;
import dev.pysandbox.ManualTime;
import dev.pysandbox.api.CreatedApiKey;
import dev.pysandbox.store.ApiKeyFormat;
import dev.pysandbox.store.ApiKeys;
import dev.pysandbox.store.ApiKeysContract;
import dev.pysandbox.store.RunStoreContractAccess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Fast
class SqliteApiKeysTest extends ApiKeysContract {
  private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");

  @TempDir Path dir;

  private Path db() {
    return dir.resolve("pysandbox.db");
  }

  @Override
  protected ApiKeys newStore(Clock clock) {
    return JdbcApiKeys.openSqlite(db(), clock, false);
  }

  @Test
  void theDatabaseFiles_holdTheKeysHash_neverTheKey() throws Exception {
    ApiKeys keys = open();
    CreatedApiKey created = keys.create("acme", "scan me");
    String hash = ApiKeyFormat.hash(created.key());
    assertThat(keys.authenticate(created.key())).isPresent();
    String stored = databaseBytes();
    assertThat(stored).contains(created.keyId()).contains(hash).doesNotContain(created.key());
    // Nor any long piece of it (the 43 random characters, say, without the prefix).
    assertThat(stored).doesNotContain(created.key().substring(4, 24));
    keys.close();
    assertThat(databaseBytes()).doesNotContain(created.key().substring(4, 24));
  }

  /** The database and its WAL and shared-memory files, as text (ISO-8859-1 keeps every byte). */
  private String databaseBytes() throws Exception {
    StringBuilder all = new StringBuilder();
    try (var files = Files.list(dir)) {
      for (Path f :
          files.filter(p -> p.getFileName().toString().startsWith("pysandbox.db")).toList()) {
        all.append(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1));
      }
    }
    return all.toString();
  }

  @Test
  void malformedKeys_areRefusedWithoutReadingTheStore() throws Exception {
    JdbcApiKeys keys = (JdbcApiKeys) open();
    String key = keys.create("acme", null).key();
    for (String junk :
        List.of(
            "",
            "psk_",
            "Bearer " + key,
            key + "x",
            key.substring(1),
            "psk_" + "!".repeat(43),
            "x".repeat(1_000_000))) {
      assertThat(keys.authenticate(junk)).isEmpty();
    }
    assertThat(keys.authenticate(null)).isEmpty();
    assertThat(keys.storeLookups()).isZero();
  }

  @Test
  void answersYesAndNo_areKeptForLessThanASecond_thenReadAgain() throws Exception {
    ManualTime time = ManualTime.frozen(T0);
    JdbcApiKeys server = (JdbcApiKeys) open(time);
    ApiKeys cli = open(time);
    CreatedApiKey created = cli.create("acme", null);
    String unknown = ApiKeyFormat.newKey();

    assertThat(server.authenticate(created.key())).isPresent();
    assertThat(server.authenticate(unknown)).isEmpty();
    assertThat(server.storeLookups()).isEqualTo(2);
    cli.revoke(created.keyId());
    time.advance(Duration.ofMillis(999));
    // Kept: the store is not read, so the other process's revocation is not seen yet.
    assertThat(server.authenticate(created.key())).isPresent();
    assertThat(server.authenticate(unknown)).isEmpty();
    assertThat(server.storeLookups()).isEqualTo(2);

    time.advance(Duration.ofMillis(1));
    assertThat(server.authenticate(created.key())).isEmpty();
    assertThat(server.authenticate(unknown)).isEmpty();
    assertThat(server.storeLookups()).isEqualTo(4);
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS)
  void lastUsed_isNotWrittenAgainWithinAMinute() throws Exception {
    ManualTime time = ManualTime.frozen(T0);
    ApiKeys keys = open(time);
    CreatedApiKey busy = keys.create("acme", "busy");
    assertThat(keys.authenticate(busy.key())).isPresent();
    Await.until(
        "the first use is recorded", () -> lastUsed(keys, busy), "2026-03-01T10:00:00Z"::equals);

    time.advance(Duration.ofSeconds(30));
    assertThat(keys.authenticate(busy.key())).isPresent();
    time.advance(Duration.ofSeconds(29));
    assertThat(keys.authenticate(busy.key())).isPresent();
    // Writes are queued in order on one thread: once a later key's first use is written, any
    // write of the uses above would have been too.
    CreatedApiKey barrier = keys.create("acme", "barrier");
    assertThat(keys.authenticate(barrier.key())).isPresent();
    Await.until("the barrier's use is recorded", () -> lastUsed(keys, barrier), v -> v != null);
    assertThat(lastUsed(keys, busy)).isEqualTo("2026-03-01T10:00:00Z");
  }

  private static String lastUsed(ApiKeys keys, CreatedApiKey key) {
    return keys.list().stream()
        .filter(k -> k.keyId().equals(key.keyId()))
        .findFirst()
        .orElseThrow()
        .lastUsedAt();
  }

  @Test
  void keysAndRuns_shareTheDataDirectorysDatabase_andAnOlderOneIsMigratedForKeys()
      throws Exception {
    Flyway.configure()
        .dataSource("jdbc:sqlite:" + db(), "", "")
        .locations("classpath:db/migration")
        .target("4")
        .load()
        .migrate();
    try (JdbcRunStore runs = JdbcRunStore.openSqlite(db(), Clock.systemUTC(), true)) {
      runs.insert(RunStoreContractAccess.running("run_before_keys"), "aaaaaaaa");
    }
    // A command that only looks still migrates a database that is not current.
    try (JdbcApiKeys keys = JdbcApiKeys.openSqlite(db(), Clock.systemUTC(), true)) {
      CreatedApiKey created = keys.create("acme", null);
      assertThat(keys.authenticate(created.key())).isPresent();
    }
    assertThat(new SqliteDatabase(db()).isCurrent(true)).isTrue();
    try (JdbcRunStore runs = JdbcRunStore.openSqlite(db(), Clock.systemUTC(), true)) {
      assertThat(runs.get("run_before_keys", false)).isPresent();
    }
  }
}

package dev.pysandbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the SQLite store adds to the contract's security events: its clock, its statements. */
@Fast
class SqliteSecurityEventsTest {
  private static final Instant NOW = Instant.parse("2026-11-25T15:00:00Z");

  @TempDir Path dir;

  private static SecurityEvent at(String id, Instant at) {
    return new SecurityEvent(
        id, "sandbox_died", "local", "s1", null, at.toString(), Map.of("reason", "exited"));
  }

  @Test
  void since_asAnAge_countsBackFromTheStoresClock() {
    try (JdbcRunStore store =
        JdbcRunStore.openSqlite(
            dir.resolve("pysandbox.db"), Clock.fixed(NOW, ZoneOffset.UTC), false)) {
      store.recordSecurityEvent(at("evt_0000000000000001", NOW.minusSeconds(7200)));
      store.recordSecurityEvent(at("evt_0000000000000002", NOW.minusSeconds(600)));
      store.recordSecurityEvent(at("evt_0000000000000003", NOW.minusSeconds(30)));

      assertThat(ids(store, "10m")).containsExactly("evt_0000000000000003", "evt_0000000000000002");
      assertThat(ids(store, "PT1M")).containsExactly("evt_0000000000000003");
      assertThat(ids(store, "3h")).hasSize(3);
      assertThat(ids(store, "999999999d")).as("before 1970: everything").hasSize(3);
      assertThat(ids(store, "2026-11-25T14:59:00Z")).containsExactly("evt_0000000000000003");
    }
  }

  @Test
  void recordingTheSameEventTwice_keepsOne_soThatAWriteTriedAgainCannotFailForGood() {
    try (JdbcRunStore store = JdbcRunStore.openSqlite(dir.resolve("pysandbox.db"))) {
      SecurityEvent e = at("evt_00000000000000aa", NOW);
      store.recordSecurityEvent(e);
      store.recordSecurityEvent(e);
      assertThat(store.securityEvents("local", SecurityEventQuery.newest())).containsExactly(e);
    }
  }

  @Test
  void listingWithEveryFilterAndPage_keepsTheStatementCacheSmall() {
    // Regression guard of the kind list_runs had: values pasted into SQL leak one statement each.
    try (JdbcRunStore store = JdbcRunStore.openSqlite(dir.resolve("pysandbox.db"))) {
      for (int i = 0; i < 20; i++) {
        store.recordSecurityEvent(at(String.format("evt_%016x", i), NOW.plusMillis(i)));
      }
      int before = store.cachedStatementCount();
      for (int i = 0; i < 200; i++) {
        String since = i % 2 == 0 ? null : NOW.plusMillis(i % 20).toString();
        SecurityEvent.Kind kind = i % 3 == 0 ? SecurityEvent.Kind.SANDBOX_DIED : null;
        String session = i % 5 == 0 ? "s1" : null;
        String cursor = i % 7 == 0 ? String.format("evt_%016x", i % 20) : null;
        store.securityEvents(
            "local", new SecurityEventQuery(since, kind, session, 1 + i % 50, cursor));
      }
      // 16 shapes of the WHERE clause and the cursor's look-up, whatever the values.
      assertThat(store.cachedStatementCount() - before).isLessThanOrEqualTo(17);
    }
  }

  private static java.util.List<String> ids(JdbcRunStore store, String since) {
    return store
        .securityEvents("local", new SecurityEventQuery(since, null, null, 100, null))
        .stream()
        .map(SecurityEvent::eventId)
        .toList();
  }
}

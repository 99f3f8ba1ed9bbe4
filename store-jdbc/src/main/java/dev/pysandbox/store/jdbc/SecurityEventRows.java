package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.params;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code security_events} table (V10) for {@link JdbcRunStore}: one row per event, written
 * once, listed by tenant newest first. A page after a cursor is a keyset page (events older than
 * the cursor's, or as old with a smaller id), so events recorded while a client pages do not shift
 * it. The WHERE clause has at most 16 shapes (four optional filters), so the statement cache stays
 * small.
 */
final class SecurityEventRows {
  private static final ObjectMapper JSON = Json.mapper();
  private static final String COLUMNS =
      "event_id, tenant, kind, session_id, run_id, at, detail_json";

  private SecurityEventRows() {}

  static void insert(CachedConnection db, SecurityEvent e) {
    String detail;
    try {
      detail = JSON.writeValueAsString(e.detail());
    } catch (JsonProcessingException x) {
      throw new IllegalArgumentException("security event detail is not JSON: " + x.getMessage(), x);
    }
    db.write(
        // A write tried again after a failure that came after the commit must not fail for good.
        "INSERT INTO security_events ("
            + COLUMNS
            + ") VALUES (?,?,?,?,?,?,?) ON CONFLICT (event_id) DO NOTHING",
        params(
            Objects.requireNonNull(e.eventId(), "eventId"),
            Objects.requireNonNull(e.tenant(), "tenant"),
            Objects.requireNonNull(e.kind(), "kind"),
            e.sessionId(),
            e.runId(),
            Instant.parse(e.at()).toEpochMilli(),
            detail));
  }

  static List<SecurityEvent> page(
      CachedConnection db, Clock clock, String tenant, SecurityEventQuery q) {
    Instant since = q.sinceAt(clock.instant());
    Filters where =
        new Filters()
            .and("tenant=?", tenant)
            .and("kind=?", q.kind() == null ? null : q.kind().wireName())
            .and("session_id=?", q.sessionId())
            .and("at>=?", since == null ? null : since.toEpochMilli());
    if (q.cursor() != null) {
      long at = cursorAt(db, tenant, q.cursor());
      where.and("(at<? OR (at=? AND event_id<?))", at, at, q.cursor());
    }
    return db.read(
        "SELECT "
            + COLUMNS
            + " FROM security_events"
            + where
            + " ORDER BY at DESC, event_id DESC"
            + " LIMIT ?",
        ps -> ps.setInt(where.bind(ps), q.limit()),
        ColumnValues.rows(SecurityEventRows::event));
  }

  /**
   * When the cursor's event happened; {@code invalid_argument} when the tenant has no such event.
   */
  private static long cursorAt(CachedConnection db, String tenant, String cursor) {
    Long at =
        db.read(
            "SELECT at FROM security_events WHERE event_id=?"
                + (tenant == null ? "" : " AND tenant=?"),
            ps -> {
              ps.setString(1, cursor);
              if (tenant != null) {
                ps.setString(2, tenant);
              }
            },
            rs -> rs.next() ? rs.getLong(1) : null);
    if (at == null) {
      throw PysandboxException.invalid(
          "cursor '"
              + cursor
              + "' names no security event of yours: give the next_cursor of the page before");
    }
    return at;
  }

  private static SecurityEvent event(ResultSet rs) throws SQLException {
    Map<String, Object> detail;
    try {
      detail = JSON.readValue(rs.getString("detail_json"), new TypeReference<>() {});
    } catch (JsonProcessingException e) {
      throw new PysandboxException(
          ErrorCode.INTERNAL, "corrupt JSON in the security events: " + e.getMessage(), e);
    }
    return new SecurityEvent(
        rs.getString("event_id"),
        rs.getString("kind"),
        rs.getString("tenant"),
        rs.getString("session_id"),
        rs.getString("run_id"),
        Instant.ofEpochMilli(rs.getLong("at")).toString(),
        detail);
  }
}

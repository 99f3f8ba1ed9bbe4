package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.json;
import static dev.pysandbox.store.jdbc.ColumnValues.params;
import static dev.pysandbox.store.jdbc.ColumnValues.parse;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.pysandbox.api.SessionStep;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code session_steps} table for {@link JdbcRunStore}: what happened to a session between its
 * runs (globals set or cleared, files put into its workspace), appended in order and read back in
 * that order, so that its exported notebook re-runs.
 */
final class SessionStepRows {
  private final CachedConnection db;

  SessionStepRows(CachedConnection db) {
    this.db = db;
  }

  void record(String tenant, String sessionId, SessionStep step) {
    db.write(
        "INSERT INTO session_steps (tenant, session_id, kind, at, after_run_id, detail_json)"
            + " VALUES (?,?,?,?,?,?)",
        params(
            Objects.requireNonNull(tenant),
            Objects.requireNonNull(sessionId),
            step.kind(),
            Instant.parse(step.at()).toEpochMilli(),
            step.afterRunId(),
            json(step.detail())));
  }

  List<SessionStep> list(String tenant, String sessionId, int limit) {
    return db.read(
        "SELECT kind, at, after_run_id, detail_json FROM session_steps"
            + " WHERE tenant=? AND session_id=? ORDER BY step_id LIMIT ?",
        params(tenant, sessionId, limit),
        ColumnValues.rows(
            rs ->
                new SessionStep(
                    rs.getString(1),
                    Instant.ofEpochMilli(rs.getLong(2)).toString(),
                    rs.getString(3),
                    parse(rs.getString(4), new TypeReference<Map<String, Object>>() {}))));
  }
}

package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.params;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SessionEnd;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.api.WireEnum;
import dev.pysandbox.store.SessionClaim;
import dev.pysandbox.store.SessionKey;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The {@code sessions} table (V2, V6, V9, V11, V12) for {@link JdbcRunStore}: one row per (tenant,
 * id), written by the server that owns the session; a row that ended keeps how and when ({@code
 * ended_as}, {@code closed_at}, {@code end_detail}) so that every server of the data directory, and
 * the next one after a restart, answers a call naming it the same way.
 */
final class SessionRows {
  // Bounds claim's retries; each one means another server changed the row in between.
  private static final int MAX_CLAIM_ATTEMPTS = 20;

  // save, claim and recordFailed each write a whole row; they differ in what happens to a pending
  // close request and in whether an existing row may be overwritten.
  private static final String UPSERT =
      "INSERT INTO sessions (id, instance_id, state, created_at, last_used_at, closed_at,"
          + " run_count, workspace_bytes, ttl_minutes, dead_reason, tenant, tier, packages_json,"
          + " environment, ended_as, end_code, end_detail, close_requested)"
          + " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0)"
          + " ON CONFLICT (tenant, id) DO UPDATE SET instance_id=excluded.instance_id,"
          + " state=excluded.state, created_at=excluded.created_at,"
          + " last_used_at=excluded.last_used_at, closed_at=excluded.closed_at,"
          + " run_count=excluded.run_count, workspace_bytes=excluded.workspace_bytes,"
          + " ttl_minutes=excluded.ttl_minutes, dead_reason=excluded.dead_reason,"
          + " tier=excluded.tier, packages_json=excluded.packages_json,"
          + " environment=excluded.environment, ended_as=excluded.ended_as,"
          + " end_code=excluded.end_code, end_detail=excluded.end_detail,";

  private final CachedConnection db;
  private final Clock clock;

  SessionRows(CachedConnection db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  void save(String tenant, SessionInfo s, String instanceId) {
    db.write(
        UPSERT
            + " close_requested=CASE WHEN excluded.state='closed' THEN 0"
            + " ELSE sessions.close_requested END",
        ps -> bind(ps, tenant, s, instanceId));
  }

  /**
   * One conditional upsert per attempt, so that the check and the write are a single statement
   * (atomic in every database): it changes an existing row only when that row is ours and open, or
   * ended (and may be taken: its end is before {@code reusableBefore}, unknown, or a failed
   * creation). A row whose owner died is first recorded ended ({@code lost}).
   */
  SessionClaim claim(
      String tenant,
      SessionInfo s,
      String instanceId,
      Predicate<String> instanceAlive,
      Instant reusableBefore) {
    String claim =
        UPSERT
            + " close_requested=CASE WHEN sessions.state <> 'closed'"
            + " AND sessions.instance_id=excluded.instance_id AND excluded.state <> 'closed'"
            + " THEN sessions.close_requested ELSE 0 END"
            + " WHERE (sessions.state='closed' AND (sessions.ended_as IS NULL"
            + " OR sessions.ended_as='failed' OR sessions.closed_at < ?))"
            + " OR (sessions.state <> 'closed' AND sessions.instance_id=excluded.instance_id)";
    long cutoff =
        reusableBefore.isAfter(Instant.ofEpochMilli(Long.MAX_VALUE - 1))
            ? Long.MAX_VALUE
            : reusableBefore.toEpochMilli();
    for (int attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
      int claimed =
          db.write(
              claim,
              ps -> {
                bind(ps, tenant, s, instanceId);
                ps.setLong(18, cutoff);
              });
      if (claimed == 1) {
        return SessionClaim.OURS;
      }
      Optional<Row> row = row(tenant, s.sessionId());
      if (row.isEmpty()) {
        continue; // deleted in between: try again
      }
      Row r = row.get();
      if (r.info.state() == SessionState.CLOSED) {
        if (r.info.ended() != null) {
          return SessionClaim.ended(r.info);
        }
        continue; // closed in between: try again
      }
      if (r.instanceId.equals(instanceId)) {
        continue; // claimed by another thread of ours in between
      }
      if (instanceAlive.test(r.instanceId)) {
        return SessionClaim.ownedBy(r.instanceId);
      }
      markLost(tenant, s.sessionId(), r.instanceId);
    }
    throw new PysandboxException(
        ErrorCode.STORE_UNAVAILABLE,
        "session "
            + s.sessionId()
            + ": could not claim it in "
            + MAX_CLAIM_ATTEMPTS
            + " attempts; its row kept changing under other servers");
  }

  /** Records an open row whose server died as ended {@code lost}, if it still is that. */
  private void markLost(String tenant, String id, String deadInstance) {
    db.write(
        "UPDATE sessions SET state='closed', closed_at=?, ended_as='lost', end_code=NULL,"
            + " end_detail=?, close_requested=0 WHERE tenant=? AND id=? AND instance_id=?"
            + " AND state <> 'closed'",
        params(clock.millis(), lostDetail(deadInstance), tenant, id, deadInstance));
  }

  private static String lostDetail(String instance) {
    return "its server (instance " + instance + ") stopped while it was open";
  }

  /**
   * Records a creation that failed, unless a row of this id is open (another server made it
   * meanwhile).
   */
  boolean recordFailed(String tenant, SessionInfo s, String instanceId) {
    return db.write(
            UPSERT + " close_requested=0 WHERE sessions.state='closed'",
            ps -> bind(ps, tenant, s, instanceId))
        == 1;
  }

  Optional<SessionInfo> recorded(String tenant, String id) {
    return row(tenant, id).map(r -> r.info);
  }

  private Optional<Row> row(String tenant, String id) {
    return db.read(
        "SELECT * FROM sessions WHERE tenant=? AND id=?",
        params(Objects.requireNonNull(tenant), id),
        rs ->
            rs.next()
                ? Optional.of(new Row(rs.getString("instance_id"), info(rs, false)))
                : Optional.empty());
  }

  private record Row(String instanceId, SessionInfo info) {}

  /**
   * Not closed, oldest first: one tenant's, or every tenant's (each with its tenant) for null; a
   * dead server's as ended {@code lost} (the row is left for a server to record so).
   */
  List<SessionInfo> open(String tenant, Predicate<String> instanceAlive) {
    List<Row> rows =
        rows(
            "SELECT * FROM sessions WHERE "
                + (tenant == null ? "" : "tenant=? AND ")
                + "state <> 'closed' ORDER BY created_at, tenant, id",
            tenant,
            null);
    List<SessionInfo> out = new ArrayList<>();
    for (Row r : rows) {
      out.add(
          instanceAlive.test(r.instanceId)
              ? r.info
              : r.info.withEnded(
                  SessionEnd.of(SessionEnd.LOST, clock.instant(), lostDetail(r.instanceId))));
    }
    return out;
  }

  /** Ended since {@code since} (with how), the oldest end first. */
  List<SessionInfo> ended(String tenant, Instant since) {
    return list(
        "SELECT * FROM sessions WHERE "
            + (tenant == null ? "" : "tenant=? AND ")
            + "state='closed' AND ended_as IS NOT NULL AND closed_at >= ?"
            + " ORDER BY closed_at, tenant, id",
        tenant,
        since);
  }

  private List<SessionInfo> list(String sql, String tenant, Instant since) {
    return rows(sql, tenant, since).stream().map(Row::info).toList();
  }

  private List<Row> rows(String sql, String tenant, Instant since) {
    return db.read(
        sql,
        ps -> {
          int i = 1;
          if (tenant != null) {
            ps.setString(i++, tenant);
          }
          if (since != null) {
            ps.setLong(i, since.toEpochMilli());
          }
        },
        ColumnValues.rows(rs -> new Row(rs.getString("instance_id"), info(rs, tenant == null))));
  }

  boolean requestClose(SessionKey session) {
    return db.write(
            "UPDATE sessions SET close_requested=1 WHERE tenant=? AND id=? AND state <> 'closed'",
            params(session.tenant(), session.id()))
        == 1;
  }

  List<SessionKey> closeRequests(String instanceId) {
    return db.read(
        "SELECT tenant, id FROM sessions WHERE close_requested=1 AND state <> 'closed'"
            + " AND instance_id=?",
        ps -> ps.setString(1, instanceId),
        ColumnValues.rows(rs -> new SessionKey(rs.getString(1), rs.getString(2))));
  }

  /** Open rows of dead servers become ended {@code lost}; returns their ids. */
  List<String> closeOrphans(Predicate<String> instanceAlive) {
    List<String[]> open =
        db.read(
            "SELECT tenant, id, instance_id FROM sessions WHERE state <> 'closed'",
            ps -> {},
            ColumnValues.rows(
                rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)}));
    List<String> changed = new ArrayList<>();
    for (String[] s : open) {
      if (!instanceAlive.test(s[2])) {
        markLost(s[0], s[1], s[2]);
        changed.add(new SessionKey(s[0], s[1]).toString());
      }
    }
    return changed;
  }

  private void bind(PreparedStatement ps, String tenant, SessionInfo s, String instanceId)
      throws SQLException {
    SessionEnd end = s.ended();
    ps.setString(1, s.sessionId());
    ps.setString(2, instanceId);
    ps.setString(3, s.state().wireName());
    ps.setLong(4, Instant.parse(s.createdAt()).toEpochMilli());
    ps.setLong(5, Instant.parse(s.lastUsedAt()).toEpochMilli());
    if (end != null) {
      ps.setLong(6, Instant.parse(end.at()).toEpochMilli());
    } else if (s.state() == SessionState.CLOSED) {
      ps.setLong(6, clock.millis());
    } else {
      ps.setNull(6, Types.BIGINT);
    }
    ps.setInt(7, s.runCount());
    ps.setLong(8, s.workspaceBytes());
    ps.setInt(9, s.ttlMinutes());
    ps.setString(10, s.deadReason());
    ps.setString(11, Objects.requireNonNull(tenant));
    ps.setString(12, s.tier());
    ps.setString(13, s.packages().isEmpty() ? null : ColumnValues.json(s.packages()));
    ps.setString(14, s.environment());
    ps.setString(15, end == null ? null : end.as());
    ps.setString(16, end == null ? null : end.errorCode());
    ps.setString(17, end == null ? null : end.reason());
  }

  private static SessionInfo info(ResultSet rs, boolean withTenant) throws SQLException {
    SessionInfo s =
        new SessionInfo(
            rs.getString("id"),
            WireEnum.parse(SessionState.class, rs.getString("state")),
            Instant.ofEpochMilli(rs.getLong("created_at")).toString(),
            Instant.ofEpochMilli(rs.getLong("last_used_at")).toString(),
            rs.getInt("run_count"),
            rs.getLong("workspace_bytes"),
            rs.getInt("ttl_minutes"),
            rs.getString("dead_reason"),
            null,
            rs.getString("tier"),
            ColumnValues.parse(rs.getString("packages_json"), new TypeReference<List<String>>() {}),
            rs.getString("environment"),
            null,
            null);
    String as = rs.getString("ended_as");
    if (as != null && s.state() == SessionState.CLOSED) {
      long at = rs.getLong("closed_at");
      s =
          s.withEnded(
              new SessionEnd(
                  as,
                  Instant.ofEpochMilli(at).toString(),
                  rs.getString("end_detail"),
                  rs.getString("end_code")));
    }
    return withTenant ? s.withTenant(rs.getString("tenant")) : s;
  }
}

package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.getLong;
import static dev.pysandbox.store.jdbc.ColumnValues.params;
import static dev.pysandbox.store.jdbc.ColumnValues.parse;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.pysandbox.api.Approval;
import dev.pysandbox.api.RiskFinding;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.store.HeldApproval;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code approvals} table for {@link JdbcRunStore}: one row per held run, inserted with the run
 * in one transaction, decided at most once (only while pending and not expired), and claimed by the
 * server that runs the approved run. Read joined with the run for its risk findings; {@link
 * #approval(ResultSet)} is the one row mapper.
 */
final class ApprovalRows {
  private static final String COLUMNS =
      "a.approval_id, a.run_id, a.tenant, a.session_id, a.instance_id, a.state, a.why,"
          + " a.requested_at, a.expires_at, a.decided_at, a.decided_by, a.decided_via,"
          + " a.decision_reason, r.risk_findings_json";

  private static final String FROM = " FROM approvals a LEFT JOIN runs r ON r.id = a.run_id";

  private final CachedConnection db;

  ApprovalRows(CachedConnection db) {
    this.db = db;
  }

  void insertAwaiting(RunRecord run, Approval approval, String instanceId) {
    db.transaction(
        "record a run awaiting approval",
        tx -> {
          tx.write(
              "INSERT INTO approvals (approval_id, run_id, tenant, session_id, instance_id, state,"
                  + " why, requested_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?)",
              params(
                  approval.approvalId(),
                  approval.runId(),
                  Objects.requireNonNull(approval.tenant()),
                  approval.sessionId(),
                  instanceId,
                  Approval.PENDING,
                  approval.why(),
                  Instant.parse(approval.requestedAt()).toEpochMilli(),
                  Instant.parse(approval.expiresAt()).toEpochMilli()));
          tx.write(RunColumns.INSERT, ps -> RunColumns.bindInsert(ps, run, instanceId));
          return null;
        });
  }

  private static Approval approval(ResultSet rs) throws SQLException {
    Long decided = getLong(rs, "decided_at");
    return new Approval(
        rs.getString("approval_id"),
        rs.getString("run_id"),
        rs.getString("tenant"),
        rs.getString("session_id"),
        rs.getString("state"),
        rs.getString("why"),
        null,
        parse(rs.getString("risk_findings_json"), new TypeReference<List<RiskFinding>>() {}),
        Instant.ofEpochMilli(rs.getLong("requested_at")).toString(),
        Instant.ofEpochMilli(rs.getLong("expires_at")).toString(),
        decided == null ? null : Instant.ofEpochMilli(decided).toString(),
        rs.getString("decided_by"),
        rs.getString("decided_via"),
        rs.getString("decision_reason"));
  }

  private static HeldApproval held(ResultSet rs) throws SQLException {
    return new HeldApproval(approval(rs), rs.getString("instance_id"));
  }

  Optional<HeldApproval> approval(String approvalId) {
    return db
        .read(
            "SELECT " + COLUMNS + FROM + " WHERE a.approval_id=?",
            ps -> ps.setString(1, approvalId),
            ColumnValues.rows(ApprovalRows::held))
        .stream()
        .findFirst();
  }

  List<Approval> approvals(String tenant, String state, int limit) {
    Filters where = new Filters().and("a.tenant=?", tenant).and("a.state=?", state);
    return db
        .read(
            "SELECT " + COLUMNS + FROM + where + " ORDER BY a.requested_at, a.approval_id LIMIT ?",
            ps -> ps.setInt(where.bind(ps), limit),
            ColumnValues.rows(ApprovalRows::held))
        .stream()
        .map(HeldApproval::approval)
        .toList();
  }

  boolean decide(
      String approvalId, String state, String decidedBy, String via, String reason, Instant at) {
    return db.write(
            "UPDATE approvals SET state=?, decided_at=?, decided_by=?, decided_via=?,"
                + " decision_reason=? WHERE approval_id=? AND state='pending' AND expires_at > ?",
            params(state, at.toEpochMilli(), decidedBy, via, reason, approvalId, at.toEpochMilli()))
        == 1;
  }

  List<HeldApproval> approvedWaiting() {
    return db.read(
        "SELECT "
            + COLUMNS
            + FROM
            + " WHERE a.state='approved' AND r.status='awaiting_approval'"
            + " ORDER BY a.decided_at, a.approval_id",
        ps -> {},
        ColumnValues.rows(ApprovalRows::held));
  }

  boolean claimApproval(String approvalId, String from, String to) {
    return db.write(
            "UPDATE approvals SET instance_id=? WHERE approval_id=? AND instance_id=?",
            params(to, approvalId, from))
        == 1;
  }

  boolean startApproved(String runId, String instanceId) {
    return db.write(
            "UPDATE runs SET status='running', instance_id=?, message=NULL WHERE id=?"
                + " AND status='awaiting_approval'",
            params(instanceId, runId))
        == 1;
  }

  List<Approval> expireApprovals(Instant now) {
    List<HeldApproval> due =
        db.read(
            "SELECT "
                + COLUMNS
                + FROM
                + " WHERE a.state='pending' AND a.expires_at <= ?"
                + " ORDER BY a.expires_at, a.approval_id",
            ps -> ps.setLong(1, now.toEpochMilli()),
            ColumnValues.rows(ApprovalRows::held));
    List<Approval> expired = new ArrayList<>();
    for (HeldApproval h : due) {
      int n =
          db.write(
              "UPDATE approvals SET state='expired', decided_at=?, decided_via='ttl'"
                  + " WHERE approval_id=? AND state='pending'",
              params(now.toEpochMilli(), h.approval().approvalId()));
      if (n == 1) {
        expired.add(h.approval());
      }
    }
    return expired;
  }
}

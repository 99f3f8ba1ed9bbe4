package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.json;
import static dev.pysandbox.store.jdbc.ColumnValues.params;
import static dev.pysandbox.store.jdbc.ColumnValues.setInt;
import static dev.pysandbox.store.jdbc.ColumnValues.setLong;

import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunSummary;
import dev.pysandbox.store.EnvironmentUse;
import dev.pysandbox.store.RecoveredOutput;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The {@code runs} table (V1 and most migrations since) for {@link JdbcRunStore}: a run is inserted
 * when it starts (or is held), finished once, and read back whole, as a page of summaries or as a
 * session's runs. Rows are mapped by {@link RunColumns}.
 */
final class RunRows {
  private final CachedConnection db;
  private final Clock clock;

  RunRows(CachedConnection db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  void insert(RunRecord run, String instanceId) {
    db.write(RunColumns.INSERT, ps -> RunColumns.bindInsert(ps, run, instanceId));
  }

  boolean finish(RunRecord run) {
    String sql =
        "UPDATE runs SET status=?, message=?, stdout=?, stderr=?, stdout_truncated=?,"
            + " stderr_truncated=?, stdout_bytes=?, stderr_bytes=?, exit_code=?, error_name=?,"
            + " error_json=?, result_json=?, displays_json=?, outputs_json=?, artifacts_json=?,"
            + " artifacts_dir=?, finished_at=?, duration_ms=?, kill_reason=?, peak_memory_bytes=?,"
            + " cpu_millis=?, limits_json=?,"
            + " risk_findings_json=coalesce(?, risk_findings_json)"
            + " WHERE id=? AND status IN ('pending','awaiting_approval','running')";
    return db.write(
            sql,
            ps -> {
              ps.setString(1, run.status().wireName());
              ps.setString(2, run.message());
              ps.setString(3, run.stdout());
              ps.setString(4, run.stderr());
              ps.setInt(5, run.stdoutTruncated() ? 1 : 0);
              ps.setInt(6, run.stderrTruncated() ? 1 : 0);
              ps.setLong(7, run.stdoutBytes());
              ps.setLong(8, run.stderrBytes());
              setInt(ps, 9, run.exitCode());
              ps.setString(10, run.error() == null ? null : run.error().name());
              ps.setString(11, json(run.error()));
              ps.setString(12, json(run.result()));
              ps.setString(13, json(run.displays()));
              ps.setString(
                  14, json(Map.of("values", run.outputs(), "non_json", run.outputsNonJson())));
              ps.setString(15, json(run.artifacts()));
              ps.setString(16, run.artifactsDir());
              ps.setLong(17, Instant.parse(run.finishedAt()).toEpochMilli());
              setLong(ps, 18, run.durationMs());
              ps.setString(19, run.killReason() == null ? null : run.killReason().wireName());
              setLong(ps, 20, run.peakMemoryBytes());
              setLong(ps, 21, run.cpuMillis());
              ps.setString(22, run.limits().isEmpty() ? null : json(run.limits()));
              ps.setString(23, run.riskFindings().isEmpty() ? null : json(run.riskFindings()));
              ps.setString(24, run.runId());
            })
        == 1;
  }

  Optional<RunRecord> get(String runId, boolean includeCode) {
    return db.read(
        "SELECT * FROM runs WHERE id=?",
        ps -> ps.setString(1, runId),
        rs -> rs.next() ? Optional.of(RunColumns.full(rs, includeCode)) : Optional.empty());
  }

  RunPage list(String tenant, RunQuery q) {
    Filters where =
        new Filters()
            .and("tenant=?", tenant)
            .and("status=?", q.status() == null ? null : q.status().wireName())
            .and("session_id=?", q.sessionId());
    long total =
        db.read(
            "SELECT COUNT(*) FROM runs" + where, where::bind, rs -> rs.next() ? rs.getLong(1) : 0L);
    List<RunSummary> runs =
        db.read(
            "SELECT "
                + RunColumns.SUMMARY
                + " FROM runs"
                + where
                + " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            ps -> {
              int next = where.bind(ps);
              ps.setInt(next, q.limit());
              ps.setInt(next + 1, q.offset());
            },
            ColumnValues.rows(rs -> RunColumns.summary(rs, tenant == null)));
    return new RunPage(runs, total, q.limit(), q.offset());
  }

  List<String> interruptOrphans(Predicate<String> instanceAlive) {
    List<String[]> open =
        db.read(
            "SELECT id, instance_id FROM runs WHERE status IN ('pending','running')",
            ps -> {},
            ColumnValues.rows(rs -> new String[] {rs.getString(1), rs.getString(2)}));
    List<String> changed = new ArrayList<>();
    for (String[] run : open) {
      if (instanceAlive.test(run[1])) {
        continue;
      }
      int n =
          db.write(
              "UPDATE runs SET status='interrupted', message=?, finished_at=?"
                  + " WHERE id=? AND status IN ('pending','running')",
              ps -> {
                ps.setString(
                    1,
                    "the server process running it (instance "
                        + run[1]
                        + ") stopped before the run finished; its sandbox was killed");
                ps.setLong(2, clock.millis());
                ps.setString(3, run[0]);
              });
      if (n == 1) {
        changed.add(run[0]);
      }
    }
    return changed;
  }

  boolean recoverOutput(String runId, RecoveredOutput out) {
    return db.write(
            "UPDATE runs SET stdout=?, stderr=?, stdout_truncated=?, stderr_truncated=?,"
                + " stdout_bytes=?, stderr_bytes=?, message=coalesce(message, '') || ?"
                + " WHERE id=? AND status='interrupted' AND record_sha256 IS NULL"
                + " AND coalesce(length(stdout), 0) = 0 AND coalesce(length(stderr), 0) = 0",
            params(
                out.stdout(),
                out.stderr(),
                out.stdoutTruncated() ? 1 : 0,
                out.stderrTruncated() ? 1 : 0,
                out.stdoutBytes(),
                out.stderrBytes(),
                out.note(),
                runId))
        == 1;
  }

  List<RunRecord> sessionRuns(String tenant, String sessionId, int limit) {
    return db.read(
        // rowid: the order runs were recorded in, when two have the same millisecond (SQLite's
        // implicit row id; a PostgreSQL store needs an identity column for the same).
        "SELECT * FROM runs WHERE tenant=? AND session_id=? ORDER BY created_at, rowid LIMIT ?",
        params(Objects.requireNonNull(tenant), sessionId, limit),
        ColumnValues.rows(rs -> RunColumns.full(rs, true)));
  }

  List<String> finishedIds(int limit) {
    return db.read(
        "SELECT id FROM runs WHERE finished_at IS NOT NULL ORDER BY finished_at DESC, id LIMIT ?",
        ps -> ps.setInt(1, limit),
        ColumnValues::strings);
  }

  List<EnvironmentUse> environmentUse(String tenant) {
    String scope = tenant == null ? "" : " AND tenant=?";
    return db.read(
        "SELECT environment, SUM(n), MAX(at) FROM ("
            + "SELECT environment, COUNT(*) AS n, MAX(created_at) AS at FROM runs"
            + " WHERE environment IS NOT NULL"
            + scope
            + " GROUP BY environment"
            + " UNION ALL SELECT environment, 0 AS n, MAX(created_at) AS at FROM sessions"
            + " WHERE environment IS NOT NULL"
            + scope
            + " GROUP BY environment) u GROUP BY environment ORDER BY environment",
        ps -> {
          if (tenant != null) {
            ps.setString(1, tenant);
            ps.setString(2, tenant);
          }
        },
        ColumnValues.rows(
            rs ->
                new EnvironmentUse(
                    rs.getString(1), rs.getLong(2), Instant.ofEpochMilli(rs.getLong(3)))));
  }
}

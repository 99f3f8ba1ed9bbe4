package dev.pysandbox.store.jdbc;

import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.WireEnum;
import dev.pysandbox.store.StoredRun;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What retention sees of the {@code runs} table for {@link JdbcRunStore}: a finished run as a
 * {@link StoredRun} (its size, where its files are), the runs a purge would remove, and the bytes a
 * tenant's kept files take. {@link ChainRows#delete} reads the run it removes through {@link
 * #SELECT} and {@link #storedRun}, the one row mapper of a {@link StoredRun}.
 */
final class StoredRunRows {
  /** A tenant's runs as {@link StoredRun}s; the first parameter is the tenant. */
  static final String SELECT =
      "SELECT id, tenant, session_id, status, created_at, artifacts_dir, coalesce(length(code), 0)"
          + " + coalesce(length(stdout), 0) + coalesce(length(stderr), 0)"
          + " + coalesce(length(error_json), 0) + coalesce(length(result_json), 0)"
          + " + coalesce(length(displays_json), 0) + coalesce(length(outputs_json), 0)"
          + " + coalesce(length(artifacts_json), 0) + coalesce(length(description), 0)"
          + " AS record_bytes FROM runs WHERE tenant=?";

  private final CachedConnection db;

  StoredRunRows(CachedConnection db) {
    this.db = db;
  }

  static StoredRun storedRun(ResultSet rs) throws SQLException {
    return new StoredRun(
        rs.getString("id"),
        rs.getString("tenant"),
        rs.getString("session_id"),
        WireEnum.parse(RunStatus.class, rs.getString("status")),
        Instant.ofEpochMilli(rs.getLong("created_at")).toString(),
        rs.getString("artifacts_dir"),
        rs.getLong("record_bytes"));
  }

  List<StoredRun> finishedBefore(String tenant, Instant before, RunStatus status, int limit) {
    return db.read(
        SELECT
            + " AND created_at < ? AND finished_at IS NOT NULL AND"
            + RunColumns.FINAL
            + (status == null ? "" : " AND status=?")
            + " ORDER BY created_at, id LIMIT ?",
        ps -> {
          ps.setString(1, Objects.requireNonNull(tenant));
          ps.setLong(2, before.toEpochMilli());
          int i = 3;
          if (status != null) {
            ps.setString(i++, status.wireName());
          }
          ps.setInt(i, limit);
        },
        ColumnValues.rows(StoredRunRows::storedRun));
  }

  long keptBytes(String tenant) {
    // SQLite's json_each over the records' file lists: a kept file has its copy's hash and no
    // reason it was skipped. One indexed scan of the tenant's runs, at the end of a run that
    // keeps files only.
    return db.read(
        "SELECT coalesce(sum(json_extract(f.value, '$.size_bytes')), 0) AS kept"
            + " FROM runs r, json_each(r.artifacts_json) f WHERE r.tenant=?"
            + " AND r.artifacts_dir IS NOT NULL AND r.artifacts_json IS NOT NULL"
            + " AND json_extract(f.value, '$.sha256') IS NOT NULL"
            + " AND json_extract(f.value, '$.skipped') IS NULL",
        ps -> ps.setString(1, Objects.requireNonNull(tenant)),
        rs -> rs.next() ? rs.getLong("kept") : 0L);
  }
}

package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.params;

import dev.pysandbox.store.BlobIndex;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The {@code blobs} and {@code run_files} tables (V14) for {@link JdbcRunStore}: which blob each
 * run's kept file is. Every transaction that frees a blob begins with a write, so it holds the
 * database's write lock before it reads which blobs are unreferenced: a reference another process
 * writes meanwhile is either seen (the blob stays) or written after the file is gone (its writer
 * then puts the file back, see {@code KeptBlobs}).
 */
final class BlobRows implements BlobIndex {
  private final CachedConnection db;
  private final Clock clock;

  BlobRows(CachedConnection db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  @Override
  public void reference(String tenant, String runId, String path, String sha256, long sizeBytes) {
    db.transaction(
        "reference a blob",
        tx -> {
          tx.write(
              "INSERT INTO blobs (sha256, size_bytes, created_at) VALUES (?,?,?)"
                  + " ON CONFLICT (sha256) DO NOTHING",
              params(sha256, sizeBytes, clock.millis()));
          tx.write(
              "INSERT INTO run_files (run_id, path, tenant, sha256, size_bytes) VALUES (?,?,?,?,?)"
                  + " ON CONFLICT (run_id, path) DO UPDATE SET tenant=excluded.tenant,"
                  + " sha256=excluded.sha256, size_bytes=excluded.size_bytes",
              params(
                  Objects.requireNonNull(runId),
                  Objects.requireNonNull(path),
                  Objects.requireNonNull(tenant),
                  sha256,
                  sizeBytes));
          return null;
        });
  }

  @Override
  public boolean tenantHolds(String tenant, String sha256) {
    return db.read(
        "SELECT 1 FROM run_files WHERE tenant=? AND sha256=? LIMIT 1",
        params(tenant, sha256),
        ResultSet::next);
  }

  @Override
  public List<BlobRef> files(String runId) {
    return db.read(
        "SELECT path, sha256, size_bytes FROM run_files WHERE run_id=? ORDER BY path",
        ps -> ps.setString(1, runId),
        ColumnValues.rows(BlobRows::ref));
  }

  @Override
  public Optional<BlobRef> file(String runId, String path) {
    return db.read(
        "SELECT path, sha256, size_bytes FROM run_files WHERE run_id=? AND path=?",
        params(runId, path),
        rs -> rs.next() ? Optional.of(ref(rs)) : Optional.<BlobRef>empty());
  }

  private static BlobRef ref(ResultSet rs) throws SQLException {
    return new BlobRef(rs.getString("path"), rs.getString("sha256"), rs.getLong("size_bytes"));
  }

  @Override
  public long keptBytes(String tenant) {
    // Each distinct blob once: the tenant's storage, whoever else references the same content.
    return db.read(
        "SELECT coalesce(sum(b.size_bytes), 0) FROM blobs b WHERE b.sha256 IN"
            + " (SELECT sha256 FROM run_files WHERE tenant=?)",
        ps -> ps.setString(1, Objects.requireNonNull(tenant)),
        rs -> rs.next() ? rs.getLong(1) : 0L);
  }

  @Override
  public long freedBy(String tenant, Collection<String> runIds) {
    if (runIds.isEmpty()) {
      return 0;
    }
    return db.read(freedSql(runIds.size()), ps -> bindFreed(ps, tenant, runIds), BlobRows::first);
  }

  /** The tenant's distinct blobs referenced by the runs and by no other run of that tenant. */
  private static String freedSql(int runs) {
    String in = String.join(",", java.util.Collections.nCopies(runs, "?"));
    return "SELECT coalesce(sum(b.size_bytes), 0) FROM blobs b WHERE b.sha256 IN"
        + " (SELECT sha256 FROM run_files WHERE tenant=? AND run_id IN ("
        + in
        + ")) AND NOT EXISTS (SELECT 1 FROM run_files o WHERE o.sha256=b.sha256 AND o.tenant=?"
        + " AND o.run_id NOT IN ("
        + in
        + "))";
  }

  private static void bindFreed(PreparedStatement ps, String tenant, Collection<String> runIds)
      throws SQLException {
    int i = 1;
    ps.setString(i++, tenant);
    for (String id : runIds) {
      ps.setString(i++, id);
    }
    ps.setString(i++, tenant);
    for (String id : runIds) {
      ps.setString(i++, id);
    }
  }

  private static long first(ResultSet rs) throws SQLException {
    return rs.next() ? rs.getLong(1) : 0L;
  }

  @Override
  public long release(String tenant, String runId, Predicate<String> deleteFile) {
    return db.transaction(
        "release a run's blobs",
        tx -> {
          // A write first: the lock is held before anything is read.
          tx.write(
              "UPDATE run_files SET tenant=tenant WHERE run_id=?", ps -> ps.setString(1, runId));
          long freed =
              tx.read(freedSql(1), ps -> bindFreed(ps, tenant, List.of(runId)), BlobRows::first);
          List<String> shas =
              tx.read(
                  "SELECT DISTINCT sha256 FROM run_files WHERE run_id=?",
                  ps -> ps.setString(1, runId),
                  ColumnValues::strings);
          tx.write("DELETE FROM run_files WHERE run_id=?", ps -> ps.setString(1, runId));
          for (String sha : shas) {
            freeIfUnreferenced(tx, sha, deleteFile);
          }
          return freed;
        });
  }

  @Override
  public int sweep(Predicate<String> deleteFile) {
    return db.transaction(
        "free unreferenced blobs",
        tx -> {
          tx.write("DELETE FROM run_files WHERE run_id NOT IN (SELECT id FROM runs)", ps -> {});
          List<String> shas =
              tx.read(
                  "SELECT sha256 FROM blobs b WHERE NOT EXISTS"
                      + " (SELECT 1 FROM run_files r WHERE r.sha256=b.sha256)",
                  ps -> {},
                  ColumnValues::strings);
          int freed = 0;
          for (String sha : shas) {
            if (freeIfUnreferenced(tx, sha, deleteFile)) {
              freed++;
            }
          }
          return freed;
        });
  }

  @Override
  public boolean deleteIfUnknown(String sha256, Predicate<String> deleteFile) {
    return db.transaction(
        "delete a blob without a row",
        tx -> {
          // A write first (even one that changes nothing): the lock is held for the check.
          tx.write("DELETE FROM blobs WHERE sha256=? AND 0=1", ps -> ps.setString(1, sha256));
          boolean known =
              tx.read(
                  "SELECT 1 FROM blobs WHERE sha256=?",
                  ps -> ps.setString(1, sha256),
                  ResultSet::next);
          return !known && deleteFile.test(sha256);
        });
  }

  /** Deletes the blob's row and file when no run references it; whether it did. */
  private static boolean freeIfUnreferenced(
      CachedConnection.Tx tx, String sha, Predicate<String> deleteFile) throws SQLException {
    boolean referenced =
        tx.read(
            "SELECT 1 FROM run_files WHERE sha256=? LIMIT 1",
            ps -> ps.setString(1, sha),
            ResultSet::next);
    if (referenced || !deleteFile.test(sha)) {
      return false;
    }
    tx.write("DELETE FROM blobs WHERE sha256=?", ps -> ps.setString(1, sha));
    return true;
  }
}

package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.getLong;
import static dev.pysandbox.store.jdbc.ColumnValues.params;

import dev.pysandbox.store.ChainLink;
import dev.pysandbox.store.StoredRun;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The hash chain over finished runs for {@link JdbcRunStore}: {@code run_chain} (one link per
 * sealed run, a tombstone once deleted) and {@code run_chain_head} (the last link). Sealing and
 * deleting take the head's row first, so that links are added one writer at a time; reading the
 * chain back recomputes every link ({@link RecordHash}) and says what does not match.
 */
final class ChainRows {
  private final CachedConnection db;
  private final Clock clock;

  /** The chain's last link, as a sealer in a transaction moves it on. */
  private static final class Head {
    long seq;
    String link;
  }

  ChainRows(CachedConnection db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  int seal(int max) {
    List<String> ids =
        db.read(
            "SELECT id FROM runs WHERE record_sha256 IS NULL AND finished_at IS NOT NULL AND"
                + RunColumns.FINAL
                + " AND NOT EXISTS (SELECT 1 FROM run_chain c WHERE c.run_id = runs.id)"
                + " ORDER BY finished_at, rowid LIMIT ?",
            ps -> ps.setInt(1, max),
            ColumnValues::strings);
    if (ids.isEmpty()) {
      return 0;
    }
    return db.transaction(
        "seal",
        tx -> {
          Head head = lockHead(tx);
          int sealed = 0;
          for (String id : ids) {
            sealed += sealOne(tx, id, head) ? 1 : 0;
          }
          saveHead(tx, head);
          return sealed;
        });
  }

  /** Takes the write lock (the first statement writes) and reads the head under it. */
  private static Head lockHead(CachedConnection.Tx tx) throws SQLException {
    tx.write("UPDATE run_chain_head SET seq=seq WHERE id=1", ps -> {});
    return tx.read(
        "SELECT seq, record_sha256 FROM run_chain_head WHERE id=1",
        ps -> {},
        rs -> {
          if (!rs.next()) {
            throw new SQLException("the hash chain's head row is missing");
          }
          Head h = new Head();
          h.seq = rs.getLong(1);
          h.link = rs.getString(2);
          return h;
        });
  }

  private static void saveHead(CachedConnection.Tx tx, Head head) throws SQLException {
    tx.write(
        "UPDATE run_chain_head SET seq=?, record_sha256=? WHERE id=1", params(head.seq, head.link));
  }

  /** Seals one finished run after {@code head}; false when it is sealed already or not final. */
  private boolean sealOne(CachedConnection.Tx tx, String runId, Head head) throws SQLException {
    Map<String, Object> record =
        tx.read(
            RecordHash.SELECT
                + " AND record_sha256 IS NULL AND finished_at IS NOT NULL AND"
                + RunColumns.FINAL,
            ps -> ps.setString(1, runId),
            rs -> rs.next() ? RecordHash.columns(rs) : null);
    if (record == null) {
      return false;
    }
    String link = RecordHash.link(head.link, record);
    long seq = head.seq + 1;
    String prev = head.link;
    tx.write(
        "INSERT INTO run_chain (seq, run_id, tenant, hash_version, prev_sha256, record_sha256,"
            + " sealed_at) VALUES (?,?,?,?,?,?,?)",
        params(
            seq,
            runId,
            (String) record.get("tenant"),
            RecordHash.VERSION,
            prev,
            link,
            clock.millis()));
    tx.write("UPDATE runs SET record_sha256=? WHERE id=?", params(link, runId));
    head.seq = seq;
    head.link = link;
    return true;
  }

  List<ChainLink> chain() {
    String sql =
        "SELECT c.seq AS c_seq, c.run_id AS c_run_id, c.tenant AS c_tenant,"
            + " c.prev_sha256 AS c_prev, c.record_sha256 AS c_link, c.deleted_at AS c_deleted,"
            + " r.record_sha256 AS r_link, r.artifacts_dir AS r_dir, r.id AS r_id, "
            + String.join(", ", RecordHash.COLUMNS.stream().map(c -> "r." + c).toList())
            + " FROM run_chain c LEFT JOIN runs r ON r.id = c.run_id ORDER BY c.seq";
    List<ChainLink> links =
        db.read(
            sql,
            ps -> {},
            rs -> {
              List<ChainLink> out = new ArrayList<>();
              String expectedPrev = RecordHash.GENESIS;
              while (rs.next()) {
                String link = rs.getString("c_link");
                boolean deleted = getLong(rs, "c_deleted") != null;
                String problem = null;
                Map<String, String> files = Map.of();
                if (!rs.getString("c_prev").equals(expectedPrev)) {
                  problem = "link_broken";
                } else if (!deleted && rs.getString("r_id") == null) {
                  problem = "record_missing";
                } else if (!deleted) {
                  Map<String, Object> record = RecordHash.columns(rs);
                  files = RecordHash.keptFiles((String) record.get("artifacts_json"));
                  if (!link.equals(RecordHash.link(expectedPrev, record))
                      || !link.equals(rs.getString("r_link"))) {
                    problem = "record_changed";
                  }
                }
                out.add(
                    new ChainLink(
                        rs.getLong("c_seq"),
                        rs.getString("c_run_id"),
                        rs.getString("c_tenant"),
                        link,
                        deleted,
                        problem,
                        files,
                        deleted ? null : rs.getString("r_dir")));
                expectedPrev = link;
              }
              return out;
            });
    String[] head =
        db.read(
            "SELECT seq, record_sha256 FROM run_chain_head WHERE id=1",
            ps -> {},
            rs -> rs.next() ? new String[] {rs.getString(1), rs.getString(2)} : null);
    ChainLink last = links.isEmpty() ? null : links.get(links.size() - 1);
    String lastLink = last == null ? RecordHash.GENESIS : last.recordSha256();
    long lastSeq = last == null ? 0 : last.seq();
    if (head == null || Long.parseLong(head[0]) != lastSeq || !head[1].equals(lastLink)) {
      // Links after the last one found were removed (or the head was changed).
      links = new ArrayList<>(links);
      links.add(
          new ChainLink(
              head == null ? lastSeq + 1 : Long.parseLong(head[0]),
              null,
              null,
              head == null ? null : head[1],
              false,
              "chain_truncated",
              Map.of(),
              null));
    }
    return links;
  }

  /** Seals the run if it is not yet, leaves a tombstone in its link and removes its row. */
  Optional<StoredRun> delete(String tenant, String runId, String reason) {
    return db.transaction(
        "delete",
        tx -> {
          Head head = lockHead(tx);
          Optional<StoredRun> run =
              tx.read(
                  StoredRunRows.SELECT
                      + " AND id=? AND finished_at IS NOT NULL AND"
                      + RunColumns.FINAL,
                  params(tenant, runId),
                  rs ->
                      rs.next()
                          ? Optional.of(StoredRunRows.storedRun(rs))
                          : Optional.<StoredRun>empty());
          if (run.isEmpty()) {
            return run;
          }
          if (sealOne(tx, runId, head)) {
            saveHead(tx, head);
          }
          tx.write(
              "UPDATE run_chain SET deleted_at=?, deleted_reason=? WHERE run_id=?",
              params(clock.millis(), reason, runId));
          tx.write("DELETE FROM runs WHERE id=?", ps -> ps.setString(1, runId));
          return run;
        });
  }
}

package dev.pysandbox.store.jdbc;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.api.Approval;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.RunSummary;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionStep;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.store.ChainLink;
import dev.pysandbox.store.HeldApproval;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.SessionClaim;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.store.StoredRun;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * {@link RunStore} over JDBC with Flyway migrations. The SQL is portable (SQLite and PostgreSQL);
 * nested values are stored as JSON text. One {@link CachedConnection}, used under its lock: every
 * statement is short, and SQLite serialises writers anyway. Longer than most classes because it is
 * the whole mapping of the SPI onto SQL.
 */
public final class JdbcRunStore implements RunStore {
  private static final ObjectMapper JSON = Json.mapper();
  private static final String SUMMARY_COLUMNS =
      "id, tenant, session_id, status, description, substr(code, 1, 200) AS code_head,"
          + " code_hash, created_at, duration_ms, exit_code, error_name";

  private final CachedConnection db;
  private final Clock clock;
  private final SessionRows sessions;
  private final BlobRows blobs;

  /**
   * @param connector opens a connection with every setting the store needs; called now, and again
   *     whenever a failure left the connection unusable
   * @param clock the time the store itself stamps rows with (runs interrupted, sessions closed)
   */
  JdbcRunStore(CachedConnection.SqlSupplier<Connection> connector, Clock clock)
      throws SQLException {
    this(connector, StoreFiles.NONE, clock);
  }

  /**
   * @param files checked before every call ({@link CachedConnection})
   */
  JdbcRunStore(CachedConnection.SqlSupplier<Connection> connector, StoreFiles files, Clock clock)
      throws SQLException {
    this.db = new CachedConnection("run store", connector, files);
    this.clock = clock;
    this.sessions = new SessionRows(db, clock);
    this.blobs = new BlobRows(db, clock);
  }

  /**
   * Where SQLite's native library is kept (written once, instead of unpacked by the driver on every
   * start); call before the first store is opened.
   */
  public static void useNativeDirectory(Path dir) {
    SqliteDatabase.useNativeDirectory(dir);
  }

  /**
   * Checks that the SQLite database at {@code file} can be written ({@link StoreFiles}).
   *
   * @throws PysandboxException {@code store_unavailable} naming the file and why
   */
  public static void requireWritable(Path file) {
    try {
      new StoreFiles(file.toAbsolutePath()).requireWritable();
    } catch (StoreFiles.Unwritable e) {
      throw new PysandboxException(ErrorCode.STORE_UNAVAILABLE, e.getMessage(), e);
    }
  }

  /** Opens (creating and migrating) the SQLite database at {@code file}, on the system clock. */
  public static JdbcRunStore openSqlite(Path file) {
    return openSqlite(file, Clock.systemUTC());
  }

  /**
   * Opens (creating and migrating) the SQLite database at {@code file}.
   *
   * @param clock the time the store stamps rows with (the server's own time source)
   */
  public static JdbcRunStore openSqlite(Path file, Clock clock) {
    return openSqlite(file, clock, false);
  }

  /**
   * Opens the SQLite database at {@code file}; with {@code lookOnly}, a database whose migrations
   * are all applied is used as it is, without Flyway (for commands that only read: faster, and they
   * need no checksum validation), one that is not yet is migrated as always.
   */
  public static JdbcRunStore openSqlite(Path file, Clock clock, boolean lookOnly) {
    return SqliteDatabase.open(
        file, lookOnly, "run store", db -> new JdbcRunStore(db::connect, db.files(), clock));
  }

  private static final String INSERT_RUN =
      "INSERT INTO runs (id, session_id, parent_run_id, instance_id, description, status, code,"
          + " code_hash, timeout_seconds, backend, created_at, limits_json, tenant, request_id,"
          + " interpreter, env_hash, server_version, approval_id, risk_findings_json, tier,"
          + " packages_json, environment, pip_freeze, message)"
          + " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

  @Override
  public void insert(RunRecord run, String instanceId) {
    write(INSERT_RUN, ps -> bindInsert(ps, run, instanceId));
  }

  private static void bindInsert(PreparedStatement ps, RunRecord run, String instanceId)
      throws SQLException {
    ps.setString(1, run.runId());
    ps.setString(2, run.sessionId());
    ps.setString(3, run.parentRunId());
    ps.setString(4, instanceId);
    ps.setString(5, run.description());
    ps.setString(6, run.status().wireName());
    ps.setString(7, run.code());
    ps.setString(8, run.codeHash());
    ps.setInt(9, run.timeoutSeconds());
    ps.setString(10, run.backend());
    ps.setLong(11, Instant.parse(run.createdAt()).toEpochMilli());
    ps.setString(12, run.limits().isEmpty() ? null : json(run.limits()));
    ps.setString(13, run.tenant() == null ? Tenants.LOCAL : run.tenant());
    ps.setString(14, run.requestId());
    ps.setString(15, run.interpreter());
    ps.setString(16, run.envHash());
    ps.setString(17, run.serverVersion());
    ps.setString(18, run.approvalId());
    ps.setString(19, run.riskFindings().isEmpty() ? null : json(run.riskFindings()));
    ps.setString(20, run.tier());
    ps.setString(21, run.packages().isEmpty() ? null : json(run.packages()));
    ps.setString(22, run.environment());
    ps.setString(23, run.pipFreeze());
    ps.setString(24, run.message()); // a held run's says who decides it and how to wait
  }

  @Override
  public boolean finish(RunRecord run) {
    String sql =
        "UPDATE runs SET status=?, message=?, stdout=?, stderr=?, stdout_truncated=?,"
            + " stderr_truncated=?, stdout_bytes=?, stderr_bytes=?, exit_code=?, error_name=?,"
            + " error_json=?, result_json=?, displays_json=?, outputs_json=?, artifacts_json=?,"
            + " artifacts_dir=?, finished_at=?, duration_ms=?, kill_reason=?, peak_memory_bytes=?,"
            + " cpu_millis=?, limits_json=?,"
            + " risk_findings_json=coalesce(?, risk_findings_json)"
            + " WHERE id=? AND status IN ('pending','awaiting_approval','running')";
    return write(
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

  @Override
  public Optional<RunRecord> get(String runId, boolean includeCode) {
    return read(
        "SELECT * FROM runs WHERE id=?",
        ps -> ps.setString(1, runId),
        rs -> rs.next() ? Optional.of(full(rs, includeCode)) : Optional.empty());
  }

  @Override
  public RunPage list(String tenant, RunQuery q) {
    StringBuilder where = new StringBuilder(" WHERE 1=1");
    List<String> args = new ArrayList<>();
    if (tenant != null) {
      where.append(" AND tenant=?");
      args.add(tenant);
    }
    if (q.status() != null) {
      where.append(" AND status=?");
      args.add(q.status().wireName());
    }
    if (q.sessionId() != null) {
      where.append(" AND session_id=?");
      args.add(q.sessionId());
    }
    CachedConnection.SqlConsumer<PreparedStatement> bind =
        ps -> {
          for (int i = 0; i < args.size(); i++) {
            ps.setString(i + 1, args.get(i));
          }
        };
    long total =
        read("SELECT COUNT(*) FROM runs" + where, bind, rs -> rs.next() ? rs.getLong(1) : 0L);
    List<RunSummary> runs =
        read(
            "SELECT "
                + SUMMARY_COLUMNS
                + " FROM runs"
                + where
                + " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            ps -> {
              bind.accept(ps);
              ps.setInt(args.size() + 1, q.limit());
              ps.setInt(args.size() + 2, q.offset());
            },
            rs -> {
              List<RunSummary> out = new ArrayList<>();
              while (rs.next()) {
                out.add(summary(rs, tenant == null));
              }
              return out;
            });
    return new RunPage(runs, total, q.limit(), q.offset());
  }

  @Override
  public List<String> interruptOrphans(Predicate<String> instanceAlive) {
    List<String[]> open =
        idAndInstance("SELECT id, instance_id FROM runs WHERE status IN ('pending','running')");
    List<String> changed = new ArrayList<>();
    for (String[] run : open) {
      if (instanceAlive.test(run[1])) {
        continue;
      }
      int n =
          write(
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

  @Override
  public boolean recoverOutput(String runId, dev.pysandbox.store.RecoveredOutput out) {
    return write(
            "UPDATE runs SET stdout=?, stderr=?, stdout_truncated=?, stderr_truncated=?,"
                + " stdout_bytes=?, stderr_bytes=?, message=coalesce(message, '') || ?"
                + " WHERE id=? AND status='interrupted' AND record_sha256 IS NULL"
                + " AND coalesce(length(stdout), 0) = 0 AND coalesce(length(stderr), 0) = 0",
            ps -> {
              ps.setString(1, out.stdout());
              ps.setString(2, out.stderr());
              ps.setInt(3, out.stdoutTruncated() ? 1 : 0);
              ps.setInt(4, out.stderrTruncated() ? 1 : 0);
              ps.setLong(5, out.stdoutBytes());
              ps.setLong(6, out.stderrBytes());
              ps.setString(7, out.note());
              ps.setString(8, runId);
            })
        == 1;
  }

  // -- audit -------------------------------------------------------------------------------------

  private static final String FINAL = " status NOT IN ('pending','awaiting_approval','running')";

  /** The chain's last link, as a sealer in a transaction moves it on. */
  private static final class Head {
    long seq;
    String link;
  }

  @Override
  public int seal(int max) {
    List<String> ids =
        read(
            "SELECT id FROM runs WHERE record_sha256 IS NULL AND finished_at IS NOT NULL AND"
                + FINAL
                + " AND NOT EXISTS (SELECT 1 FROM run_chain c WHERE c.run_id = runs.id)"
                + " ORDER BY finished_at, rowid LIMIT ?",
            ps -> ps.setInt(1, max),
            JdbcRunStore::strings);
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
        "UPDATE run_chain_head SET seq=?, record_sha256=? WHERE id=1",
        ps -> {
          ps.setLong(1, head.seq);
          ps.setString(2, head.link);
        });
  }

  /** Seals one finished run after {@code head}; false when it is sealed already or not final. */
  private boolean sealOne(CachedConnection.Tx tx, String runId, Head head) throws SQLException {
    Map<String, Object> record =
        tx.read(
            RecordHash.SELECT
                + " AND record_sha256 IS NULL AND finished_at IS NOT NULL AND"
                + FINAL,
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
        ps -> {
          ps.setLong(1, seq);
          ps.setString(2, runId);
          ps.setString(3, (String) record.get("tenant"));
          ps.setInt(4, RecordHash.VERSION);
          ps.setString(5, prev);
          ps.setString(6, link);
          ps.setLong(7, clock.millis());
        });
    tx.write(
        "UPDATE runs SET record_sha256=? WHERE id=?",
        ps -> {
          ps.setString(1, link);
          ps.setString(2, runId);
        });
    head.seq = seq;
    head.link = link;
    return true;
  }

  @Override
  public List<ChainLink> chain() {
    String sql =
        "SELECT c.seq AS c_seq, c.run_id AS c_run_id, c.tenant AS c_tenant,"
            + " c.prev_sha256 AS c_prev, c.record_sha256 AS c_link, c.deleted_at AS c_deleted,"
            + " r.record_sha256 AS r_link, r.artifacts_dir AS r_dir, r.id AS r_id, "
            + String.join(", ", RecordHash.COLUMNS.stream().map(c -> "r." + c).toList())
            + " FROM run_chain c LEFT JOIN runs r ON r.id = c.run_id ORDER BY c.seq";
    List<ChainLink> links =
        read(
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
        read(
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

  @Override
  public Optional<StoredRun> delete(String tenant, String runId, String reason) {
    return db.transaction(
        "delete",
        tx -> {
          Head head = lockHead(tx);
          Optional<StoredRun> run =
              tx.read(
                  STORED_RUN + " AND id=? AND finished_at IS NOT NULL AND" + FINAL,
                  ps -> {
                    ps.setString(1, tenant);
                    ps.setString(2, runId);
                  },
                  rs -> rs.next() ? Optional.of(storedRun(rs)) : Optional.<StoredRun>empty());
          if (run.isEmpty()) {
            return run;
          }
          if (sealOne(tx, runId, head)) {
            saveHead(tx, head);
          }
          tx.write(
              "UPDATE run_chain SET deleted_at=?, deleted_reason=? WHERE run_id=?",
              ps -> {
                ps.setLong(1, clock.millis());
                ps.setString(2, reason);
                ps.setString(3, runId);
              });
          tx.write("DELETE FROM runs WHERE id=?", ps -> ps.setString(1, runId));
          return run;
        });
  }

  private static final String STORED_RUN =
      "SELECT id, tenant, session_id, status, created_at, artifacts_dir, coalesce(length(code), 0)"
          + " + coalesce(length(stdout), 0) + coalesce(length(stderr), 0)"
          + " + coalesce(length(error_json), 0) + coalesce(length(result_json), 0)"
          + " + coalesce(length(displays_json), 0) + coalesce(length(outputs_json), 0)"
          + " + coalesce(length(artifacts_json), 0) + coalesce(length(description), 0)"
          + " AS record_bytes FROM runs WHERE tenant=?";

  private static StoredRun storedRun(ResultSet rs) throws SQLException {
    return new StoredRun(
        rs.getString("id"),
        rs.getString("tenant"),
        rs.getString("session_id"),
        RunStatus.fromWire(rs.getString("status")),
        Instant.ofEpochMilli(rs.getLong("created_at")).toString(),
        rs.getString("artifacts_dir"),
        rs.getLong("record_bytes"));
  }

  @Override
  public List<StoredRun> finishedBefore(
      String tenant, Instant before, RunStatus status, int limit) {
    return read(
        STORED_RUN
            + " AND created_at < ? AND finished_at IS NOT NULL AND"
            + FINAL
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
        rs -> {
          List<StoredRun> out = new ArrayList<>();
          while (rs.next()) {
            out.add(storedRun(rs));
          }
          return out;
        });
  }

  @Override
  public long keptBytes(String tenant) {
    return blobs.keptBytes(tenant);
  }

  @Override
  public dev.pysandbox.store.BlobIndex blobs() {
    return blobs;
  }

  @Override
  public List<RunRecord> sessionRuns(String tenant, String sessionId, int limit) {
    return read(
        // rowid: the order runs were recorded in, when two have the same millisecond (SQLite's
        // implicit row id; a PostgreSQL store needs an identity column for the same).
        "SELECT * FROM runs WHERE tenant=? AND session_id=? ORDER BY created_at, rowid LIMIT ?",
        ps -> {
          ps.setString(1, Objects.requireNonNull(tenant));
          ps.setString(2, sessionId);
          ps.setInt(3, limit);
        },
        rs -> {
          List<RunRecord> out = new ArrayList<>();
          while (rs.next()) {
            out.add(full(rs, true));
          }
          return out;
        });
  }

  @Override
  public List<String> finishedIds(int limit) {
    return read(
        "SELECT id FROM runs WHERE finished_at IS NOT NULL ORDER BY finished_at DESC, id LIMIT ?",
        ps -> ps.setInt(1, limit),
        JdbcRunStore::strings);
  }

  private static List<String> strings(ResultSet rs) throws SQLException {
    List<String> out = new ArrayList<>();
    while (rs.next()) {
      out.add(rs.getString(1));
    }
    return out;
  }

  // -- approvals ---------------------------------------------------------------------------------

  @Override
  public void insertAwaiting(RunRecord run, Approval approval, String instanceId) {
    db.transaction(
        "record a run awaiting approval",
        tx -> {
          tx.write(
              "INSERT INTO approvals (approval_id, run_id, tenant, session_id, instance_id, state,"
                  + " why, requested_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?)",
              ps -> {
                ps.setString(1, approval.approvalId());
                ps.setString(2, approval.runId());
                ps.setString(3, Objects.requireNonNull(approval.tenant()));
                ps.setString(4, approval.sessionId());
                ps.setString(5, instanceId);
                ps.setString(6, Approval.PENDING);
                ps.setString(7, approval.why());
                ps.setLong(8, Instant.parse(approval.requestedAt()).toEpochMilli());
                ps.setLong(9, Instant.parse(approval.expiresAt()).toEpochMilli());
              });
          tx.write(INSERT_RUN, ps -> bindInsert(ps, run, instanceId));
          return null;
        });
  }

  private static final String APPROVAL_COLUMNS =
      "a.approval_id, a.run_id, a.tenant, a.session_id, a.instance_id, a.state, a.why,"
          + " a.requested_at, a.expires_at, a.decided_at, a.decided_by, a.decided_via,"
          + " a.decision_reason, r.risk_findings_json";

  private static final String APPROVAL_FROM =
      " FROM approvals a LEFT JOIN runs r ON r.id = a.run_id";

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
        parse(
            rs.getString("risk_findings_json"),
            new TypeReference<List<dev.pysandbox.api.RiskFinding>>() {}),
        Instant.ofEpochMilli(rs.getLong("requested_at")).toString(),
        Instant.ofEpochMilli(rs.getLong("expires_at")).toString(),
        decided == null ? null : Instant.ofEpochMilli(decided).toString(),
        rs.getString("decided_by"),
        rs.getString("decided_via"),
        rs.getString("decision_reason"));
  }

  private static List<HeldApproval> held(ResultSet rs) throws SQLException {
    List<HeldApproval> out = new ArrayList<>();
    while (rs.next()) {
      out.add(new HeldApproval(approval(rs), rs.getString("instance_id")));
    }
    return out;
  }

  @Override
  public Optional<HeldApproval> approval(String approvalId) {
    return read(
            "SELECT " + APPROVAL_COLUMNS + APPROVAL_FROM + " WHERE a.approval_id=?",
            ps -> ps.setString(1, approvalId),
            JdbcRunStore::held)
        .stream()
        .findFirst();
  }

  @Override
  public List<Approval> approvals(String tenant, String state, int limit) {
    StringBuilder where = new StringBuilder(" WHERE 1=1");
    List<String> args = new ArrayList<>();
    if (tenant != null) {
      where.append(" AND a.tenant=?");
      args.add(tenant);
    }
    if (state != null) {
      where.append(" AND a.state=?");
      args.add(state);
    }
    return read(
            "SELECT "
                + APPROVAL_COLUMNS
                + APPROVAL_FROM
                + where
                + " ORDER BY a.requested_at, a.approval_id LIMIT ?",
            ps -> {
              for (int i = 0; i < args.size(); i++) {
                ps.setString(i + 1, args.get(i));
              }
              ps.setInt(args.size() + 1, limit);
            },
            JdbcRunStore::held)
        .stream()
        .map(HeldApproval::approval)
        .toList();
  }

  @Override
  public boolean decide(
      String approvalId, String state, String decidedBy, String via, String reason, Instant at) {
    return write(
            "UPDATE approvals SET state=?, decided_at=?, decided_by=?, decided_via=?,"
                + " decision_reason=? WHERE approval_id=? AND state='pending' AND expires_at > ?",
            ps -> {
              ps.setString(1, state);
              ps.setLong(2, at.toEpochMilli());
              ps.setString(3, decidedBy);
              ps.setString(4, via);
              ps.setString(5, reason);
              ps.setString(6, approvalId);
              ps.setLong(7, at.toEpochMilli());
            })
        == 1;
  }

  @Override
  public List<HeldApproval> approvedWaiting() {
    return read(
        "SELECT "
            + APPROVAL_COLUMNS
            + APPROVAL_FROM
            + " WHERE a.state='approved' AND r.status='awaiting_approval'"
            + " ORDER BY a.decided_at, a.approval_id",
        ps -> {},
        JdbcRunStore::held);
  }

  @Override
  public boolean claimApproval(String approvalId, String from, String to) {
    return write(
            "UPDATE approvals SET instance_id=? WHERE approval_id=? AND instance_id=?",
            ps -> {
              ps.setString(1, to);
              ps.setString(2, approvalId);
              ps.setString(3, from);
            })
        == 1;
  }

  @Override
  public boolean startApproved(String runId, String instanceId) {
    return write(
            "UPDATE runs SET status='running', instance_id=?, message=NULL WHERE id=?"
                + " AND status='awaiting_approval'",
            ps -> {
              ps.setString(1, instanceId);
              ps.setString(2, runId);
            })
        == 1;
  }

  @Override
  public List<Approval> expireApprovals(Instant now) {
    List<HeldApproval> due =
        read(
            "SELECT "
                + APPROVAL_COLUMNS
                + APPROVAL_FROM
                + " WHERE a.state='pending' AND a.expires_at <= ?"
                + " ORDER BY a.expires_at, a.approval_id",
            ps -> ps.setLong(1, now.toEpochMilli()),
            JdbcRunStore::held);
    List<Approval> expired = new ArrayList<>();
    for (HeldApproval h : due) {
      int n =
          write(
              "UPDATE approvals SET state='expired', decided_at=?, decided_via='ttl'"
                  + " WHERE approval_id=? AND state='pending'",
              ps -> {
                ps.setLong(1, now.toEpochMilli());
                ps.setString(2, h.approval().approvalId());
              });
      if (n == 1) {
        expired.add(h.approval());
      }
    }
    return expired;
  }

  // -- security events ---------------------------------------------------------------------------

  @Override
  public void recordSecurityEvent(SecurityEvent event) {
    SecurityEventRows.insert(db, event);
  }

  @Override
  public List<SecurityEvent> securityEvents(String tenant, SecurityEventQuery query) {
    return SecurityEventRows.page(db, clock, tenant, query);
  }

  // -- sessions ----------------------------------------------------------------------------------

  @Override
  public void recordSessionStep(String tenant, String sessionId, SessionStep step) {
    write(
        "INSERT INTO session_steps (tenant, session_id, kind, at, after_run_id, detail_json)"
            + " VALUES (?,?,?,?,?,?)",
        ps -> {
          ps.setString(1, Objects.requireNonNull(tenant));
          ps.setString(2, Objects.requireNonNull(sessionId));
          ps.setString(3, step.kind());
          ps.setLong(4, Instant.parse(step.at()).toEpochMilli());
          ps.setString(5, step.afterRunId());
          ps.setString(6, json(step.detail()));
        });
  }

  @Override
  public List<SessionStep> sessionSteps(String tenant, String sessionId, int limit) {
    return read(
        "SELECT kind, at, after_run_id, detail_json FROM session_steps"
            + " WHERE tenant=? AND session_id=? ORDER BY step_id LIMIT ?",
        ps -> {
          ps.setString(1, tenant);
          ps.setString(2, sessionId);
          ps.setInt(3, limit);
        },
        rs -> {
          List<SessionStep> out = new ArrayList<>();
          while (rs.next()) {
            out.add(
                new SessionStep(
                    rs.getString(1),
                    Instant.ofEpochMilli(rs.getLong(2)).toString(),
                    rs.getString(3),
                    parse(rs.getString(4), new TypeReference<Map<String, Object>>() {})));
          }
          return out;
        });
  }

  @Override
  public void saveSession(String tenant, SessionInfo s, String instanceId) {
    sessions.save(tenant, s, instanceId);
  }

  @Override
  public SessionClaim claimSession(
      String tenant,
      SessionInfo s,
      String instanceId,
      Predicate<String> instanceAlive,
      Instant reusableBefore) {
    return sessions.claim(tenant, s, instanceId, instanceAlive, reusableBefore);
  }

  @Override
  public boolean recordFailedSession(String tenant, SessionInfo s, String instanceId) {
    return sessions.recordFailed(tenant, s, instanceId);
  }

  @Override
  public Optional<SessionInfo> recordedSession(String tenant, String sessionId) {
    return sessions.recorded(tenant, sessionId);
  }

  @Override
  public List<SessionInfo> openSessions(String tenant, Predicate<String> instanceAlive) {
    return sessions.open(tenant, instanceAlive);
  }

  @Override
  public List<SessionInfo> endedSessions(String tenant, Instant since) {
    return sessions.ended(tenant, since);
  }

  @Override
  public boolean requestClose(SessionKey session) {
    return sessions.requestClose(session);
  }

  @Override
  public List<SessionKey> closeRequests(String instanceId) {
    return sessions.closeRequests(instanceId);
  }

  @Override
  public List<String> closeOrphanSessions(Predicate<String> instanceAlive) {
    return sessions.closeOrphans(instanceAlive);
  }

  /** The (id, instance id) pairs a query selects, to find what dead servers left. */
  private List<String[]> idAndInstance(String sql) {
    return read(
        sql,
        ps -> {},
        rs -> {
          List<String[]> out = new ArrayList<>();
          while (rs.next()) {
            out.add(new String[] {rs.getString(1), rs.getString(2)});
          }
          return out;
        });
  }

  // -- mapping -----------------------------------------------------------------------------------

  private static RunSummary summary(ResultSet rs, boolean withTenant) throws SQLException {
    String head = rs.getString("code_head");
    String firstLine = head == null ? "" : head.strip().lines().findFirst().orElse("");
    if (firstLine.length() > 80) {
      firstLine = firstLine.substring(0, 77) + "...";
    }
    return new RunSummary(
        rs.getString("id"),
        rs.getString("session_id"),
        RunStatus.fromWire(rs.getString("status")),
        rs.getString("description"),
        firstLine,
        rs.getString("code_hash"),
        Instant.ofEpochMilli(rs.getLong("created_at")).toString(),
        getLong(rs, "duration_ms"),
        getInt(rs, "exit_code"),
        rs.getString("error_name"),
        withTenant ? rs.getString("tenant") : null);
  }

  private static RunRecord full(ResultSet rs, boolean includeCode) throws SQLException {
    Map<String, Object> outputs = parse(rs.getString("outputs_json"), new TypeReference<>() {});
    @SuppressWarnings("unchecked")
    Map<String, Object> values =
        outputs == null ? Map.of() : (Map<String, Object>) outputs.getOrDefault("values", Map.of());
    @SuppressWarnings("unchecked")
    List<String> nonJson =
        outputs == null ? List.of() : (List<String>) outputs.getOrDefault("non_json", List.of());
    Long finished = getLong(rs, "finished_at");
    return RunRecord.builder()
        .runId(rs.getString("id"))
        .tenant(rs.getString("tenant"))
        .requestId(rs.getString("request_id"))
        .interpreter(rs.getString("interpreter"))
        .envHash(rs.getString("env_hash"))
        .serverVersion(rs.getString("server_version"))
        .recordSha256(rs.getString("record_sha256"))
        .approvalId(rs.getString("approval_id"))
        .riskFindings(
            parse(
                rs.getString("risk_findings_json"),
                new TypeReference<List<dev.pysandbox.api.RiskFinding>>() {}))
        .sessionId(rs.getString("session_id"))
        .parentRunId(rs.getString("parent_run_id"))
        .description(rs.getString("description"))
        .status(RunStatus.fromWire(rs.getString("status")))
        .message(rs.getString("message"))
        .killReason(killReason(rs.getString("kill_reason")))
        .limits(parse(rs.getString("limits_json"), new TypeReference<Map<String, Object>>() {}))
        .tier(rs.getString("tier"))
        .packages(parse(rs.getString("packages_json"), new TypeReference<List<String>>() {}))
        .environment(rs.getString("environment"))
        .pipFreeze(rs.getString("pip_freeze"))
        .peakMemoryBytes(getLong(rs, "peak_memory_bytes"))
        .cpuMillis(getLong(rs, "cpu_millis"))
        .code(includeCode ? rs.getString("code") : null)
        .codeHash(rs.getString("code_hash"))
        .stdout(rs.getString("stdout"))
        .stderr(rs.getString("stderr"))
        .stdoutTruncated(rs.getInt("stdout_truncated") != 0)
        .stderrTruncated(rs.getInt("stderr_truncated") != 0)
        .stdoutBytes(rs.getLong("stdout_bytes"))
        .stderrBytes(rs.getLong("stderr_bytes"))
        .exitCode(getInt(rs, "exit_code"))
        .error(parse(rs.getString("error_json"), new TypeReference<ErrorInfo>() {}))
        .result(parse(rs.getString("result_json"), new TypeReference<Map<String, Object>>() {}))
        .displays(
            parse(rs.getString("displays_json"), new TypeReference<List<Map<String, Object>>>() {}))
        .outputs(values)
        .outputsNonJson(nonJson)
        .artifacts(parse(rs.getString("artifacts_json"), new TypeReference<List<Artifact>>() {}))
        .artifactsDir(rs.getString("artifacts_dir"))
        .timeoutSeconds(rs.getInt("timeout_seconds"))
        .backend(rs.getString("backend"))
        .createdAt(Instant.ofEpochMilli(rs.getLong("created_at")).toString())
        .finishedAt(finished == null ? null : Instant.ofEpochMilli(finished).toString())
        .durationMs(getLong(rs, "duration_ms"))
        .build();
  }

  static String json(Object value) {
    if (value == null) {
      return null;
    }
    try {
      return JSON.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise " + value.getClass(), e);
    }
  }

  static <T> T parse(String text, TypeReference<T> type) {
    if (text == null) {
      return null;
    }
    try {
      return JSON.readValue(text, type);
    } catch (JsonProcessingException e) {
      throw new PysandboxException(
          ErrorCode.INTERNAL, "corrupt JSON in the run store: " + e.getMessage(), e);
    }
  }

  private static KillReason killReason(String wireName) {
    return wireName == null ? null : KillReason.fromWire(wireName);
  }

  private static Long getLong(ResultSet rs, String column) throws SQLException {
    long v = rs.getLong(column);
    return rs.wasNull() ? null : v;
  }

  private static Integer getInt(ResultSet rs, String column) throws SQLException {
    int v = rs.getInt(column);
    return rs.wasNull() ? null : v;
  }

  private static void setInt(PreparedStatement ps, int i, Integer v) throws SQLException {
    if (v == null) {
      ps.setNull(i, Types.INTEGER);
    } else {
      ps.setInt(i, v);
    }
  }

  private static void setLong(PreparedStatement ps, int i, Long v) throws SQLException {
    if (v == null) {
      ps.setNull(i, Types.BIGINT);
    } else {
      ps.setLong(i, v);
    }
  }

  // -- plumbing ----------------------------------------------------------------------------------

  private int write(String sql, CachedConnection.SqlConsumer<PreparedStatement> bind) {
    return db.write(sql, bind);
  }

  private <R> R read(
      String sql,
      CachedConnection.SqlConsumer<PreparedStatement> bind,
      CachedConnection.SqlFunction<ResultSet, R> map) {
    return db.read(sql, bind, map);
  }

  /** How many prepared statements are cached, for tests that guard against leaks. */
  int cachedStatementCount() {
    return db.cachedStatementCount();
  }

  @Override
  public List<dev.pysandbox.store.EnvironmentUse> environmentUse(String tenant) {
    String scope = tenant == null ? "" : " AND tenant=?";
    CachedConnection.SqlConsumer<PreparedStatement> bind =
        ps -> {
          if (tenant != null) {
            ps.setString(1, tenant);
            ps.setString(2, tenant);
          }
        };
    return read(
        "SELECT environment, SUM(n), MAX(at) FROM ("
            + "SELECT environment, COUNT(*) AS n, MAX(created_at) AS at FROM runs"
            + " WHERE environment IS NOT NULL"
            + scope
            + " GROUP BY environment"
            + " UNION ALL SELECT environment, 0 AS n, MAX(created_at) AS at FROM sessions"
            + " WHERE environment IS NOT NULL"
            + scope
            + " GROUP BY environment) u GROUP BY environment ORDER BY environment",
        bind,
        rs -> {
          List<dev.pysandbox.store.EnvironmentUse> out = new ArrayList<>();
          while (rs.next()) {
            out.add(
                new dev.pysandbox.store.EnvironmentUse(
                    rs.getString(1), rs.getLong(2), Instant.ofEpochMilli(rs.getLong(3))));
          }
          return out;
        });
  }

  @Override
  public void close() {
    db.close();
  }
}

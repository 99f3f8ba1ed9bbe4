package dev.pysandbox.store.jdbc;

import dev.pysandbox.api.Approval;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionStep;
import dev.pysandbox.store.AgentRunStore;
import dev.pysandbox.store.ChainLink;
import dev.pysandbox.store.EnvironmentUse;
import dev.pysandbox.store.HeldApproval;
import dev.pysandbox.store.RecoveredOutput;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.store.SessionClaim;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.store.StoredRun;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * {@link RunStore} over JDBC with Flyway migrations. The SQL is portable (SQLite and PostgreSQL);
 * nested values are stored as JSON text ({@link ColumnValues}). One {@link CachedConnection}, used
 * under its lock: every statement is short, and SQLite serialises writers anyway.
 *
 * <p>A facade: each kind of record has a class of its own with its SQL and its one row mapper —
 * runs ({@link RunRows}, mapped by {@link RunColumns}), the hash chain ({@link ChainRows}), what
 * retention sees of runs ({@link StoredRunRows}), approvals ({@link ApprovalRows}), sessions
 * ({@link SessionRows}), session steps ({@link SessionStepRows}), security events ({@link
 * SecurityEventRows}) and agent runs ({@link AgentRunRows}, which is the {@link #agentRuns()} store
 * itself). This class opens the database and hands each SPI call to one of them.
 */
public final class JdbcRunStore implements RunStore {
  private final CachedConnection db;
  private final Clock clock;
  private final RunRows runs;
  private final ChainRows chain;
  private final StoredRunRows stored;
  private final ApprovalRows approvals;
  private final SessionStepRows steps;
  private final SessionRows sessions;
  private final BlobRows blobs;
  private final AgentRunRows agentRuns;

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
    this.runs = new RunRows(db, clock);
    this.chain = new ChainRows(db, clock);
    this.stored = new StoredRunRows(db);
    this.approvals = new ApprovalRows(db);
    this.steps = new SessionStepRows(db);
    this.sessions = new SessionRows(db, clock);
    this.blobs = new BlobRows(db, clock);
    this.agentRuns = new AgentRunRows(db, clock);
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

  @Override
  public void insert(RunRecord run, String instanceId) {
    runs.insert(run, instanceId);
  }

  @Override
  public boolean finish(RunRecord run) {
    return runs.finish(run);
  }

  @Override
  public Optional<RunRecord> get(String runId, boolean includeCode) {
    return runs.get(runId, includeCode);
  }

  @Override
  public RunPage list(String tenant, RunQuery q) {
    return runs.list(tenant, q);
  }

  @Override
  public List<String> interruptOrphans(Predicate<String> instanceAlive) {
    return runs.interruptOrphans(instanceAlive);
  }

  @Override
  public boolean recoverOutput(String runId, RecoveredOutput out) {
    return runs.recoverOutput(runId, out);
  }

  @Override
  public List<RunRecord> sessionRuns(String tenant, String sessionId, int limit) {
    return runs.sessionRuns(tenant, sessionId, limit);
  }

  @Override
  public List<String> finishedIds(int limit) {
    return runs.finishedIds(limit);
  }

  @Override
  public List<EnvironmentUse> environmentUse(String tenant) {
    return runs.environmentUse(tenant);
  }

  // -- audit -------------------------------------------------------------------------------------

  @Override
  public int seal(int max) {
    return chain.seal(max);
  }

  @Override
  public List<ChainLink> chain() {
    return chain.chain();
  }

  @Override
  public Optional<StoredRun> delete(String tenant, String runId, String reason) {
    return chain.delete(tenant, runId, reason);
  }

  @Override
  public List<StoredRun> finishedBefore(
      String tenant, Instant before, RunStatus status, int limit) {
    return stored.finishedBefore(tenant, before, status, limit);
  }

  @Override
  public long keptBytes(String tenant) {
    return blobs.keptBytes(tenant);
  }

  @Override
  public dev.pysandbox.store.BlobIndex blobs() {
    return blobs;
  }

  // -- approvals ---------------------------------------------------------------------------------

  @Override
  public void insertAwaiting(RunRecord run, Approval approval, String instanceId) {
    approvals.insertAwaiting(run, approval, instanceId);
  }

  @Override
  public Optional<HeldApproval> approval(String approvalId) {
    return approvals.approval(approvalId);
  }

  @Override
  public List<Approval> approvals(String tenant, String state, int limit) {
    return approvals.approvals(tenant, state, limit);
  }

  @Override
  public boolean decide(
      String approvalId, String state, String decidedBy, String via, String reason, Instant at) {
    return approvals.decide(approvalId, state, decidedBy, via, reason, at);
  }

  @Override
  public List<HeldApproval> approvedWaiting() {
    return approvals.approvedWaiting();
  }

  @Override
  public boolean claimApproval(String approvalId, String from, String to) {
    return approvals.claimApproval(approvalId, from, to);
  }

  @Override
  public boolean startApproved(String runId, String instanceId) {
    return approvals.startApproved(runId, instanceId);
  }

  @Override
  public List<Approval> expireApprovals(Instant now) {
    return approvals.expireApprovals(now);
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
    steps.record(tenant, sessionId, step);
  }

  @Override
  public List<SessionStep> sessionSteps(String tenant, String sessionId, int limit) {
    return steps.list(tenant, sessionId, limit);
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

  // -- agent runs --------------------------------------------------------------------------------

  @Override
  public AgentRunStore agentRuns() {
    return agentRuns;
  }

  /** How many prepared statements are cached, for tests that guard against leaks. */
  int cachedStatementCount() {
    return db.cachedStatementCount();
  }

  @Override
  public void close() {
    db.close();
  }
}

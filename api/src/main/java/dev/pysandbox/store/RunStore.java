package dev.pysandbox.store;

import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The SPI for run history. A run is inserted before it starts and finished once, atomically; a
 * finished run never changes again. Implementations are thread-safe and may be shared by several
 * server processes.
 */
public interface RunStore extends AutoCloseable {
  /**
   * Records a run that is about to start, owned by its {@link RunRecord#tenant()} ({@code local}
   * when null).
   *
   * @param instanceId the server process that owns it until it finishes
   */
  void insert(RunRecord run, String instanceId);

  /**
   * Writes a run's final state in one transaction.
   *
   * @return false when the run was not in a non-final state (it was already finished)
   */
  boolean finish(RunRecord run);

  /**
   * A run of any tenant, with its {@link RunRecord#tenant()}: the caller checks the owner, so that
   * another tenant's run and a missing one take the same path.
   *
   * @param includeCode false leaves {@code code} null
   */
  Optional<RunRecord> get(String runId, boolean includeCode);

  /**
   * A page of runs, newest first.
   *
   * @param tenant one tenant's; or, for null, every tenant's (an operator's view), each with its
   *     {@link dev.pysandbox.api.RunSummary#tenant()}
   */
  RunPage list(String tenant, RunQuery query);

  /**
   * Marks runs whose owning server is gone as {@code interrupted}.
   *
   * @param instanceAlive tells whether an instance id belongs to a live server process
   * @return the ids of the runs changed
   */
  java.util.List<String> interruptOrphans(Predicate<String> instanceAlive);

  /**
   * Puts the output an interrupted run printed (as its dead server spilled it) into its record,
   * when the record holds no output yet and is not sealed into the audit chain.
   *
   * @return whether the record took it
   */
  boolean recoverOutput(String runId, RecoveredOutput output);

  /**
   * Records a tenant's session's current state (insert or replace), owned by {@code instanceId}.
   */
  void saveSession(String tenant, dev.pysandbox.api.SessionInfo session, String instanceId);

  /**
   * Claims a session id for this server instance, atomically even against other server processes
   * sharing the store: of several instances claiming the same id at once, exactly one wins. On
   * success the session's row holds {@code session} as {@link #saveSession} would write it, owned
   * by {@code instanceId}; a close request left by a previous owner is dropped. An open row whose
   * owner is dead is first recorded ended {@code lost} (its server stopped with it open).
   *
   * @param session the session to record; its id is the one claimed
   * @param instanceId the claiming server process
   * @param instanceAlive tells whether another instance id belongs to a live server process; asked
   *     only about the current owner of an open row, outside any store lock
   * @param reusableBefore a row that ended ({@link dev.pysandbox.api.SessionInfo#ended()}) before
   *     this instant may be taken as a new session; one that ended later is answered as {@link
   *     SessionClaim#ended}. A failed creation and a row closed without a recorded end may always
   *     be taken. {@link java.time.Instant#MAX} takes any ended row.
   * @return {@link SessionClaim#OURS} when this instance now owns the id (a new row, a row that may
   *     be taken, or one already ours); else the live owner, or the session as it ended
   */
  SessionClaim claimSession(
      String tenant,
      dev.pysandbox.api.SessionInfo session,
      String instanceId,
      Predicate<String> instanceAlive,
      java.time.Instant reusableBefore);

  /**
   * Records a session whose creation failed ({@code session.ended()} says how), unless a row of
   * this tenant and id is open (another server made the session meanwhile).
   *
   * @return false when an open row was left as it is
   */
  boolean recordFailedSession(
      String tenant, dev.pysandbox.api.SessionInfo session, String instanceId);

  /** A tenant's session row as last recorded, in any state (with how it ended, if it did). */
  Optional<dev.pysandbox.api.SessionInfo> recordedSession(String tenant, String sessionId);

  /**
   * Sessions recorded as not closed, oldest first. One whose server is gone is shown as the next
   * server will record it (state {@code closed}, ended {@code lost}), without changing its row.
   *
   * @param tenant one tenant's; or, for null, every tenant's, each with its {@link
   *     dev.pysandbox.api.SessionInfo#tenant()}
   * @param instanceAlive tells whether an instance id belongs to a live server process
   */
  java.util.List<dev.pysandbox.api.SessionInfo> openSessions(
      String tenant, Predicate<String> instanceAlive);

  /**
   * Sessions that ended (with a recorded end) at or after {@code since}, the oldest end first.
   *
   * @param tenant one tenant's; or, for null, every tenant's, each with its tenant
   */
  java.util.List<dev.pysandbox.api.SessionInfo> endedSessions(
      String tenant, java.time.Instant since);

  /**
   * Asks the server that owns a session to close it.
   *
   * @return false when the tenant has no open session with this id
   */
  boolean requestClose(SessionKey session);

  /** This instance's open sessions that someone asked to close. */
  java.util.List<SessionKey> closeRequests(String instanceId);

  /**
   * Records sessions whose server is gone as ended {@code lost} (their sandboxes died with it).
   *
   * @return the sessions changed ({@link SessionKey#toString()})
   */
  java.util.List<String> closeOrphanSessions(Predicate<String> instanceAlive);

  // -- audit -------------------------------------------------------------------------------------

  /**
   * Seals finished runs that are not sealed yet, in the order they finished: each gets its link in
   * the hash chain ({@link RunRecord#recordSha256()}). Safe to call from several server processes
   * at once: each run is sealed once.
   *
   * @param max the most runs sealed by this call
   * @return how many were sealed
   */
  int seal(int max);

  /**
   * The whole hash chain, in order, each link checked against the record it seals as the record is
   * now. The files are the caller's to check ({@link ChainLink#keptFiles()}).
   */
  java.util.List<ChainLink> chain();

  /**
   * Deletes a tenant's finished run, leaving a tombstone in the hash chain (the run is sealed first
   * if it was not yet), in one transaction.
   *
   * @return the run as it was, or empty when the tenant has no finished run with this id
   */
  Optional<StoredRun> delete(String tenant, String runId, String reason);

  /**
   * A tenant's finished runs created before {@code before}, oldest first.
   *
   * @param status only runs in this state, or null for all finished ones
   */
  java.util.List<StoredRun> finishedBefore(
      String tenant, java.time.Instant before, dev.pysandbox.api.RunStatus status, int limit);

  /**
   * Bytes of the files a tenant's runs keep: the sizes of the distinct blobs they reference, each
   * once however many runs keep it ({@link BlobIndex#keptBytes}); what {@code
   * tenant_storage_max_mb} bounds.
   */
  long keptBytes(String tenant);

  /** Which blob each run's kept file is (content-addressed kept files). */
  BlobIndex blobs();

  /** A tenant's runs of one session, oldest first, with their code. */
  java.util.List<RunRecord> sessionRuns(String tenant, String sessionId, int limit);

  /** Records a step of a tenant's session (what changed its state besides a run). */
  void recordSessionStep(String tenant, String sessionId, dev.pysandbox.api.SessionStep step);

  /** A tenant's steps of one session, in the order they were recorded, at most {@code limit}. */
  java.util.List<dev.pysandbox.api.SessionStep> sessionSteps(
      String tenant, String sessionId, int limit);

  /** Ids of finished runs of every tenant, the most recently finished first. */
  java.util.List<String> finishedIds(int limit);

  // -- approvals ---------------------------------------------------------------------------------

  /**
   * Records a run that waits for a decision ({@code awaiting_approval}) and its pending approval,
   * in one transaction, held by {@code instanceId}.
   */
  void insertAwaiting(RunRecord run, dev.pysandbox.api.Approval approval, String instanceId);

  /** An approval of any tenant (with its tenant; the caller checks the owner), without code. */
  Optional<HeldApproval> approval(String approvalId);

  /**
   * Approvals, oldest first.
   *
   * @param tenant only this tenant's, or null for every tenant's
   * @param state only in this state, or null for all
   */
  java.util.List<dev.pysandbox.api.Approval> approvals(String tenant, String state, int limit);

  /**
   * Decides a pending approval that has not expired at {@code at}: one conditional write, so that
   * of two deciders exactly one wins.
   *
   * @param state {@code approved} or {@code denied}
   * @return false when it was not pending any more, or had expired
   */
  boolean decide(
      String approvalId,
      String state,
      String decidedBy,
      String via,
      String reason,
      java.time.Instant at);

  /** Approved approvals whose runs still wait to start, with the server holding each. */
  java.util.List<HeldApproval> approvedWaiting();

  /** Moves an approval's run to another holder, if {@code from} still holds it. */
  boolean claimApproval(String approvalId, String from, String to);

  /**
   * Starts an approved run: {@code awaiting_approval} becomes {@code running}, owned by {@code
   * instanceId}.
   *
   * @return false when the run was not awaiting approval (started or ended already)
   */
  boolean startApproved(String runId, String instanceId);

  /**
   * Marks pending approvals whose time ran out at {@code now} as {@code expired}.
   *
   * @return those changed
   */
  java.util.List<dev.pysandbox.api.Approval> expireApprovals(java.time.Instant now);

  // -- security events ---------------------------------------------------------------------------

  /**
   * Records a security event, owned by its {@link SecurityEvent#tenant()}. Events are never changed
   * afterwards.
   *
   * @param event with its {@link SecurityEvent#eventId()} and {@link SecurityEvent#at()} set;
   *     {@code at} is kept to the millisecond
   */
  void recordSecurityEvent(SecurityEvent event);

  /**
   * A page of one tenant's security events (every tenant's for a null tenant: an operator's view),
   * newest first (by time, then by event id), at most {@link SecurityEventQuery#limit()}; after the
   * event {@link SecurityEventQuery#cursor()} when it is set. An age in {@link
   * SecurityEventQuery#since()} counts back from the store's clock (the server's time source).
   *
   * @throws dev.pysandbox.api.PysandboxException {@code invalid_argument} when the cursor names no
   *     event of this tenant (another tenant's event answers the same)
   */
  java.util.List<SecurityEvent> securityEvents(String tenant, SecurityEventQuery query);

  /**
   * The package environments runs of this tenant (every tenant's with {@code null}) had, with how
   * many runs had each and when the newest was created; sessions made with packages count too.
   */
  java.util.List<EnvironmentUse> environmentUse(String tenant);

  /**
   * Agent runs and their steps (issue 26).
   *
   * @throws UnsupportedOperationException in a store that keeps none
   */
  default AgentRunStore agentRuns() {
    throw new UnsupportedOperationException("this store keeps no agent runs");
  }

  @Override
  void close();
}

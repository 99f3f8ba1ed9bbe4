package dev.pysandbox.api;

/**
 * The core, as every face sees it. Thread-safe; every method validates its arguments and fails with
 * a {@link PysandboxException} carrying one of the closed set of {@link ErrorCode}s. What the
 * server tells about itself (its counts, metrics, load and the calls it answered) is {@link
 * ServerAccount}.
 */
public interface SandboxService extends ServerAccount, AutoCloseable {
  /** The longest {@code wait_seconds} {@link #getRun(String, boolean, int)} takes. */
  int MAX_WAIT_SECONDS = 60;

  /**
   * Runs code and returns the finished run. A run that fails, times out or is killed still returns
   * normally, with its status; exceptions are for calls that could not run at all.
   */
  default RunRecord run(ExecutionRequest request) {
    return run(request, RunListener.NONE);
  }

  /**
   * Runs code, telling {@code listener} its run id as soon as the run is recorded.
   *
   * @see #run(ExecutionRequest)
   */
  RunRecord run(ExecutionRequest request, RunListener listener);

  /**
   * Starts a run and answers at once with its record as it stands ({@code running}, no output yet);
   * the run goes on without the caller, is recorded as usual, and can be watched ({@link #attach}),
   * waited for ({@link #getRun(String, boolean, int)}) and cancelled ({@link #cancelRun}). In a
   * session it is the session's one execution until it ends: another call on the session meanwhile
   * gets {@code session_busy}.
   *
   * @param listener as for {@link #run(ExecutionRequest, RunListener)}; told {@code started} before
   *     this returns
   * @throws PysandboxException what {@link #run(ExecutionRequest, RunListener)} throws for a run
   *     that cannot start ({@code invalid_argument}, {@code session_busy}, {@code max_sessions} …);
   *     {@code rate_limited} (retryable) when {@value #MAX_STARTED_RUNS} runs started this way are
   *     still running on this server
   */
  RunRecord start(ExecutionRequest request, RunListener listener);

  /** Runs started with {@link #start} that may be in flight at once on one server. */
  int MAX_STARTED_RUNS = 256;

  /**
   * Subscribes to a run's events ({@link RunEvent}): a run in flight here from where the subscriber
   * asks, a finished one replayed from its record. Taking events is a poll ({@link
   * Subscription#poll}): poll once when this returns, then whenever {@code sink} says there are
   * more, so a subscriber costs no thread and a slow one never slows the run. The events of a run
   * are kept (at most 1 MiB of output, older output dropped) until 60 s after it ends, so that a
   * subscriber that lost its connection resumes where it was; later, and for a run another server
   * process runs (looked for in the store every 500 ms), the events come from the record: {@code
   * started}, its output, {@code result}, {@code error}, {@code done} (only {@code done}, after
   * {@code afterSeq}, for a subscriber that resumes). A subscriber that has {@code done} already
   * gets a subscription that is {@link Subscription#finished()} at once.
   *
   * @param afterSeq the last event the subscriber has ({@link RunEvent#seq()}); 0 for all
   * @throws PysandboxException {@code not_found} when the caller has no run with this id (another
   *     tenant's run answers the same), {@code invalid_argument} for a negative {@code afterSeq}
   */
  Subscription attach(String runId, long afterSeq, EventSink sink);

  /** A page of run history, newest first. */
  RunPage listRuns(RunQuery query);

  /**
   * @throws PysandboxException {@code not_found} when no run has this id
   */
  RunRecord getRun(String runId, boolean includeCode);

  /**
   * A run as it stands after waiting at most {@code waitSeconds} for it to end (at once when it has
   * ended, or when {@code waitSeconds} is 0).
   *
   * @throws PysandboxException {@code not_found} when no run has this id, {@code invalid_argument}
   *     when {@code waitSeconds} is outside 0..{@value #MAX_WAIT_SECONDS}
   */
  RunRecord getRun(String runId, boolean includeCode, int waitSeconds);

  /**
   * Opens a session: a persistent Python worker and a workspace.
   *
   * @param sessionId the id to use, or {@code null} for a generated {@code sess_} + 12 hex
   * @param ttlMinutes idle minutes before it is closed, or {@code null} for the default
   * @return the session; an existing one with this id is returned as it is
   * @throws PysandboxException {@code max_sessions} when the limit is reached
   */
  default SessionInfo createSession(String sessionId, Integer ttlMinutes) {
    return createSession(sessionId, ttlMinutes, LimitRequest.DEFAULTS);
  }

  /**
   * Opens a session with its own resource limits and tier.
   *
   * @param limits what to change from the tier's default limits (up to the server's maxima)
   * @param tier a tier the server allows, or {@code null} for its default ({@code tier_default});
   *     the session keeps it for its whole life
   * @return the session; an existing one with this id is returned as it is
   * @throws PysandboxException {@code invalid_argument} for a tier the server does not know (the
   *     message names those it knows), for a limit past the server's maximum, or when an existing
   *     session with this id has another tier; {@code forbidden} for a tier the server does not
   *     allow or cannot provide yet; {@code max_sessions} when the limit is reached
   */
  default SessionInfo createSession(
      String sessionId, Integer ttlMinutes, LimitRequest limits, String tier) {
    return createSession(sessionId, ttlMinutes, limits, tier, java.util.List.of());
  }

  /**
   * Opens a session whose sandbox has these packages for its whole life (built into a cached
   * environment first when none has them yet; that may take minutes).
   *
   * @param packages PEP 508 requirements (at most 50; no URLs, paths or pip options)
   * @throws PysandboxException as {@link #createSession(String, Integer, LimitRequest, String)};
   *     {@code invalid_argument} for a bad spec or an existing session with other packages; {@code
   *     environment_failed} naming what pip said when the environment cannot be built
   */
  default SessionInfo createSession(
      String sessionId,
      Integer ttlMinutes,
      LimitRequest limits,
      String tier,
      java.util.List<String> packages) {
    return createSession(sessionId, ttlMinutes, limits, tier, packages, null);
  }

  /**
   * Opens a session with packages and, in a tier with a way out (network), a narrower allow-list
   * than the server's {@code network_allow}.
   *
   * @param networkAllow host patterns, each covered by one of the server's, or {@code null} for the
   *     server's list
   * @throws PysandboxException {@code invalid_argument} when a pattern would widen the server's
   *     list, or the tier has no network
   */
  SessionInfo createSession(
      String sessionId,
      Integer ttlMinutes,
      LimitRequest limits,
      String tier,
      java.util.List<String> packages,
      java.util.List<String> networkAllow);

  /**
   * The package environments this caller's runs and sessions used (every one on stdio and the CLI):
   * key, requirements, size, created, last used, runs, whether one is in use now.
   */
  EnvironmentList listEnvironments();

  /**
   * Removes environments not used for {@code olderThanDays} days (never one in use); with {@code
   * dryRun} (the default) only says what it would remove.
   */
  EnvironmentCleanResult cleanEnvironments(int olderThanDays, boolean dryRun);

  /**
   * Fetches {@code url} on the server, through the egress proxy's policy ({@code network_allow}),
   * into the session's {@code /mnt/data/<filename>}.
   *
   * @throws PysandboxException {@code forbidden} when the policy refuses the host (the message says
   *     why), {@code invalid_argument} for a bad URL or file name, {@code artifact_too_large} past
   *     {@code download_max_mb} or the session's disk quota, {@code not_found} for no such session
   */
  DownloadResult downloadFile(String sessionId, String url, String filename, Boolean overwrite);

  /**
   * Opens a session with its own resource limits, in the server's default tier.
   *
   * @param limits what to change from the server's defaults (up to its maxima)
   * @throws PysandboxException {@code invalid_argument} when a limit passes the server's maximum
   */
  default SessionInfo createSession(String sessionId, Integer ttlMinutes, LimitRequest limits) {
    return createSession(sessionId, ttlMinutes, limits, null);
  }

  /** This server's open sessions (and dead ones not yet closed), oldest first. */
  default java.util.List<SessionInfo> listSessions() {
    return listSessions(false);
  }

  /**
   * This server's open sessions (and dead ones not yet closed), oldest first; with {@code
   * includeEnded}, then the sessions that ended within {@code session_retention} (of every server
   * sharing the data directory), state {@code closed} with {@link SessionInfo#ended()}, the oldest
   * end first.
   */
  java.util.List<SessionInfo> listSessions(boolean includeEnded);

  /**
   * One open session of this server, as {@link #listSessions()} shows it.
   *
   * @throws PysandboxException {@code session_expired}, {@code session_closed}, {@code
   *     session_lost} (or the error its creation failed with) for one that ended within {@code
   *     session_retention}; {@code not_found} for one that never was
   */
  SessionInfo getSession(String sessionId);

  /**
   * The open sessions of every live server sharing this data directory, as they last recorded them
   * (for the CLI, which holds no sessions of its own).
   */
  java.util.List<SessionInfo> listRecordedSessions();

  /**
   * Kills the session's sandbox and removes its workspace (unless workspaces are kept). A session
   * another server process owns is closed by asking that server (through the store) and waiting up
   * to 10 s.
   *
   * @throws PysandboxException {@code session_busy} while it runs code, {@code not_found}
   */
  SessionInfo closeSession(String sessionId);

  /** Writes a file into a session's workspace, creating the session if needed. */
  UploadResult uploadFile(UploadRequest request);

  /**
   * Writes a file into a session's workspace from a stream, creating the session if needed, without
   * holding the content: it is written through a bounded buffer to a new temporary file (O_EXCL, no
   * link followed) that is renamed into place, as {@link #uploadFile} writes, and removed if the
   * upload fails. {@code content} is read to its end and not closed.
   *
   * @param filename a path below the workspace, as {@link UploadRequest} requires (folders made as
   *     needed)
   * @param maxBytes the most bytes taken (the server's {@code upload_max_bytes} caps it)
   * @throws PysandboxException {@code payload_too_large} when {@code content} has more, {@code
   *     artifact_too_large} past the session's disk quota, {@code file_exists} without {@code
   *     overwrite}, {@code invalid_argument} for a bad name or when reading {@code content} fails,
   *     {@code session_busy}
   */
  UploadResult uploadStream(
      String sessionId,
      String filename,
      java.io.InputStream content,
      long maxBytes,
      boolean overwrite);

  /** Files of a session's workspace or of a run; exactly one of the ids. */
  ArtifactList listArtifacts(String runId, String sessionId);

  /**
   * One file of a session's workspace or of a run; exactly one of the ids.
   *
   * @param maxSizeBytes refuse files larger than this with {@code artifact_too_large}
   */
  ArtifactContent readArtifact(String runId, String sessionId, String path, long maxSizeBytes);

  /**
   * One file of a session's workspace or of a run, opened for streaming, of any size: the file is
   * opened as {@link #readArtifact} opens it (by descriptor, a link refused rather than followed),
   * hashed through that descriptor, and read through it. Exactly one of the ids.
   *
   * @return the open file; the caller closes it
   * @throws PysandboxException {@code invalid_argument} (a path that is not plain and relative, a
   *     directory), {@code not_found}, {@code forbidden} (a link, a FIFO, a leased file)
   */
  FileStream openArtifact(String runId, String sessionId, String path);

  /** A run's {@code __outputs__}. */
  RunOutputs getRunOutputs(String runId);

  /** Globals of a session: the named ones, or all when {@code names} is null. */
  ContextSnapshot getContext(String sessionId, java.util.List<String> names);

  /** Sets globals of a session from a JSON object. */
  ContextSnapshot setContext(String sessionId, java.util.Map<String, Object> values);

  /** Resets a session's globals (variables and imports); its files stay. */
  SessionInfo clearContext(String sessionId);

  /**
   * Stops a running run: KeyboardInterrupt first; if it has not stopped after the grace period its
   * sandbox is killed (and its session is dead).
   */
  CancelResult cancelRun(String runId);

  /**
   * {@link #cancelRun(String)} on the caller's behalf, for {@code reason}, which the run's record
   * keeps in its message ({@code "cancelled: the client disconnected; stopped by
   * KeyboardInterrupt"}): for a face whose client gave up on the run without asking.
   *
   * @param reason why, in a few words; {@code null} is {@link #cancelRun(String)}
   */
  CancelResult cancelRun(String runId, String reason);

  // -- safety review -----------------------------------------------------------------------------

  /**
   * Analyses code without running or recording anything: syntax errors, risk findings, counts.
   *
   * @throws PysandboxException {@code invalid_argument} for code that is empty, too large or holds
   *     a NUL; {@code backend_unavailable} when the analysis sandbox cannot start
   */
  ValidationReport validateCode(String code);

  /** The caller's approvals waiting for a decision, oldest first. */
  ApprovalList listPendingApprovals();

  /**
   * One of the caller's approvals, with the code it would run.
   *
   * @throws PysandboxException {@code not_found}
   */
  Approval getApproval(String approvalId);

  /**
   * Decides one of the caller's pending approvals. Only faces that know a person (or, where the
   * server allows it, the agent) made the decision call this.
   *
   * @param decidedBy who decided ({@code key:<key id>}, {@code agent:<tenant>} …)
   * @param via {@code rest}, {@code agent} …
   * @return the run as it stands: {@code denied}, or approved and starting on the server holding it
   * @throws PysandboxException {@code not_found}, {@code approval_expired}, {@code
   *     invalid_argument} for one decided already
   */
  RunRecord decideApproval(
      String approvalId, boolean approve, String decidedBy, String via, String reason);

  /**
   * A page of the caller's security events, newest first: approvals requested, approved, denied and
   * expired, runs stopped by a limit, denied imports and network attempts, sandboxes that died.
   * Events this server recorded are listed at once; each is written to the store off the path of
   * the call it concerns.
   *
   * @throws PysandboxException {@code invalid_argument} for a cursor that names no event of the
   *     caller's
   */
  SecurityEventList listSecurityEvents(SecurityEventQuery query);

  // -- audit -------------------------------------------------------------------------------------

  /**
   * A run as {@link #getRun(String, boolean, int)} gives it, with its notebook when asked: {@code
   * notebook_source} (the marimo .py text) and the host paths of its .ipynb and .py (written now if
   * the background writer has not got to them yet).
   */
  RunRecord getRun(
      String runId, boolean includeCode, int waitSeconds, boolean includeNotebookSource);

  /**
   * Runs a recorded run again as a new run with {@code parent_run_id} set: in a fresh sandbox with
   * the original's limits, or in the named session with the session's.
   *
   * @throws PysandboxException {@code not_found} for an unknown run, and what {@link
   *     #run(ExecutionRequest, RunListener)} throws
   */
  RunRecord rerun(RerunRequest request, RunListener listener);

  /**
   * Compares a run with another (by default its parent).
   *
   * @param compareTo the "before" side, or null for {@code runId}'s parent
   * @throws PysandboxException {@code not_found} for an unknown run, {@code invalid_argument} when
   *     {@code compareTo} is null and the run has no parent
   */
  RunDiff diffRuns(String runId, String compareTo);

  /**
   * Deletes a finished run's record, leaving a tombstone in the hash chain, and with {@code
   * deleteFiles} its directory (kept files, notebooks).
   *
   * @throws PysandboxException {@code invalid_argument} for a run still running, {@code not_found}
   */
  DeleteResult deleteRun(String runId, boolean deleteFiles);

  /**
   * Deletes finished runs created more than {@code olderThanDays} days ago (at most {@value
   * PurgeResult#MAX_RUNS_PER_CALL} per call), with their files; a dry run only counts them.
   *
   * @param status only runs in this state, or null
   */
  PurgeResult purgeRuns(int olderThanDays, RunStatus status, boolean dryRun);

  /**
   * A session's recorded runs as one notebook, in order, written under the data directory's {@code
   * exports/} (also for a session closed since, while its runs are kept).
   *
   * @param format {@code ipynb} or {@code marimo}
   * @throws PysandboxException {@code not_found} when the session has no recorded run
   */
  SessionExport exportSession(String sessionId, String format);

  /** What is installed, what is missing, the limits in force. */
  SetupReport checkSetup();

  /**
   * The caller's agent runs (issue 26): a model that writes Python, run in a session.
   *
   * @throws PysandboxException invalid_argument in a service that runs no agents
   */
  default dev.pysandbox.api.agent.AgentService agents() {
    throw PysandboxException.invalid("this server runs no agents");
  }

  @Override
  void close();
}

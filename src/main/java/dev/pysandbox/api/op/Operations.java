package dev.pysandbox.api.op;

import static dev.pysandbox.api.op.Operation.Effect.DESTRUCTIVE;
import static dev.pysandbox.api.op.Operation.Effect.IDEMPOTENT_WRITE;
import static dev.pysandbox.api.op.Operation.Effect.READ;
import static dev.pysandbox.api.op.Operation.Effect.WRITE;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.DownloadResult;
import dev.pysandbox.api.EnvironmentCleanResult;
import dev.pysandbox.api.EnvironmentList;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.RunOutputs;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionList;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.api.ValidationReport;
import java.util.List;
import java.util.stream.Stream;

/**
 * Every operation the faces expose, declared once (the MCP tool surface of ARCHITECTURE.md). Limits
 * come from the constants the request values check them with; the few that depend on the server's
 * configuration (timeout_seconds, code size) show the built-in default.
 */
public final class Operations {
  private Operations() {}

  /** The states a run reaches on this server (the others belong to features not built yet). */
  public static final List<String> LISTED_STATUSES =
      Stream.of(
              RunStatus.RUNNING,
              RunStatus.SUCCEEDED,
              RunStatus.FAILED,
              RunStatus.TIMED_OUT,
              RunStatus.CANCELLED,
              RunStatus.INTERRUPTED)
          .map(RunStatus::wireName)
          .toList();

  // -- runs --------------------------------------------------------------------------------------

  public static final Operation RUN_PYTHON =
      new Operation(
          "run_python",
          "Run Python code",
          "Run Python 3 code in an isolated sandbox and return stdout, stderr, the value of the"
              + " trailing expression, errors with a traceback, display outputs (charts as"
              + " images) and the files written to /mnt/data. The sandbox has no network (for a"
              + " package it lacks give packages; for a file, download_file; the network tier"
              + " reaches allowed hosts) and no host files (but in the filesystem tier, the"
              + " directories the server shows read-only at /mnt/host/<name>); numpy, pandas,"
              + " matplotlib, seaborn, scikit-learn, statsmodels, openpyxl, plotly, reportlab and"
              + " Debian's Python packages are there (check_setup lists them with versions);"
              + " /mnt/data is the working directory, the place for input and output files."
              + " Give session_id to keep variables and files between calls (a session is"
              + " created on first use); omit it for a fresh sandbox. Limits: timeout_seconds,"
              + " memory, processes, disk; a run stopped by one says which in kill_reason."
              + " Every run is recorded (get_run, list_runs); dry_run only analyses the code.",
          WRITE,
          List.of(
              Param.string(
                      "code",
                      "Python source to run (at most 100 000 UTF-8 bytes). The value of a"
                          + " trailing expression is returned as the result.")
                  .required()
                  .minLength(1),
              Param.id(
                  "session_id",
                  "Run in this session (state and files persist). Omit for a fresh one-shot"
                      + " sandbox."),
              Param.string("description", "What this code is for; kept with the run.")
                  .maxLength(ExecutionRequest.MAX_DESCRIPTION_CHARS),
              Param.id(
                  "tier",
                  "Tier of a fresh one-shot sandbox: what it may reach and import, and its default"
                      + " limits (check_setup lists the tiers this server allows; default: the"
                      + " server's tier_default, basic). With session_id, the session's tier:"
                      + " leave it out, or give that one; a session made by this call gets it."),
              Param.integer(
                      "timeout_seconds",
                      "Wall-clock limit in seconds (default 60, at most the server's timeout_max);"
                          + " past it the sandbox is killed and the run is timed_out.")
                  .min(1)
                  .max(3600)
                  .serverDefault(60),
              Param.bool(
                      "async_mode",
                      "Answer at once with the run as it starts (run_id, status running,"
                          + " session_id) while it goes on; get_run with wait_seconds waits for"
                          + " it, cancel_run stops it. In a session it is the session's one"
                          + " execution until it ends.")
                  .defaultValue(false),
              Param.bool(
                      "require_approval",
                      "Hold the run for a person's approval unless the analysis of its code finds"
                          + " nothing at or above the server's approval_threshold (high). A held"
                          + " run answers status awaiting_approval with its findings and an"
                          + " approval_id; nothing runs until a person approves it (the client's"
                          + " prompt, the command line, or an approver's key); then get_run with"
                          + " wait_seconds reads its result. The agent cannot approve its own run.")
                  .defaultValue(false),
              Param.bool(
                      "dry_run",
                      "Only analyse the code, as validate_code does, and answer in a run's shape"
                          + " (status dry_run, risk_findings, a syntax error as error, no"
                          + " run_id): nothing runs, no sandbox is used, nothing is recorded.")
                  .defaultValue(false),
              packages(
                  "Packages the run needs that the sandbox lacks: PEP 508 requirements such as"
                      + " 'tinypkg==1.0' or 'requests>=2,<3' (at most 50; no URLs, paths or pip"
                      + " options). Installed once into a cached environment (through the"
                      + " server's package index; the first run with a new set may take a"
                      + " while), mounted read-only; the code still has no network. PEP 723"
                      + " '# /// script' dependencies in the code count too. With session_id:"
                      + " the session's packages are fixed when it is created.")),
          RunRecord.class);

  public static final Operation VALIDATE_CODE =
      new Operation(
          "validate_code",
          "Check code without running it",
          "Analyse Python code without running it: whether it compiles (syntax errors with line,"
              + " column and message, as the sandbox's Python reports them), risk findings (rule,"
              + " severity critical/high/medium/low, message, line, column, snippet: process"
              + " execution, dynamic code, native access, network, unsafe deserialization, file"
              + " writes and deletion outside /mnt/data, environment reads, and the disguises"
              + " around them), and counts of lines, functions and imports. Nothing runs and"
              + " nothing is recorded. A finding is a reason to look, not proof; no finding is not"
              + " proof of safety (the sandbox is what contains code).",
          READ,
          List.of(
              Param.string(
                      "code",
                      "Python source to check (at most 100 000 UTF-8 bytes, as for run_python).")
                  .required()
                  .minLength(1)),
          ValidationReport.class);

  public static final Operation CANCEL_RUN =
      new Operation(
          "cancel_run",
          "Cancel a run",
          "Stop a running run: KeyboardInterrupt first (a session keeps its state); if it has"
              + " not stopped after the grace period its sandbox is killed (a session is then"
              + " dead).",
          DESTRUCTIVE,
          List.of(runId("The run's id (run_ + 20 hex).")),
          CancelResult.class);

  public static final Operation LIST_RUNS =
      new Operation(
          "list_runs",
          "List runs",
          "List recorded runs, newest first, with status, timing and a preview of the code.",
          READ,
          List.of(
              Param.integer("limit", "Runs per page (1-1000).")
                  .min(1)
                  .max(RunQuery.MAX_LIMIT)
                  .defaultValue(20),
              Param.integer("offset", "Runs to skip, for the next page.").min(0).defaultValue(0),
              Param.string("status", "Only runs in this state.").oneOf(LISTED_STATUSES),
              Param.id("session_id", "Only runs of this session.")),
          RunPage.class);

  public static final Operation GET_RUN =
      new Operation(
          "get_run",
          "Get a run",
          "Get one recorded run by id: code, status, outputs, error, result, files, timings;"
              + " with wait_seconds, wait for a running one to end.",
          READ,
          List.of(
              runId("The run's id (run_ + 20 hex), as run_python or list_runs gave it."),
              Param.bool("include_code", "Include the code that ran.").defaultValue(true),
              Param.integer(
                      "wait_seconds",
                      "Wait up to this many seconds for a running run to end (at most 60), then"
                          + " answer it as it stands.")
                  .min(0)
                  .max(SandboxService.MAX_WAIT_SECONDS)
                  .defaultValue(0),
              Param.bool(
                      "include_notebook_source",
                      "Add notebook_source (the run as a marimo notebook, .py text that also runs"
                          + " with plain python), the host paths of its .ipynb and .py, and a"
                          + " view_command that opens them.")
                  .defaultValue(false)),
          RunRecord.class);

  public static final Operation GET_RUN_OUTPUTS =
      new Operation(
          "get_run_outputs",
          "Get a run's outputs",
          "Get the __outputs__ dict a run filled (values that are not JSON come as repr).",
          READ,
          List.of(runId("The run's id (run_ + 20 hex).")),
          RunOutputs.class);

  // -- audit -------------------------------------------------------------------------------------

  /** The states a finished run can be in (what purge_runs may choose by). */
  public static final List<String> FINISHED_STATUSES =
      LISTED_STATUSES.stream().filter(s -> !s.equals(RunStatus.RUNNING.wireName())).toList();

  public static final Operation RERUN =
      new Operation(
          "rerun",
          "Re-run a run",
          "Run a recorded run's code again as a new run linked to it (parent_run_id): in a fresh"
              + " sandbox with the original's limits, or in session_id with the session's state"
              + " and limits. Give code, description or timeout_seconds to change them; diff_runs"
              + " then compares the two.",
          WRITE,
          List.of(
              runId("The run to re-run (run_ + 20 hex)."),
              Param.string("code", "Code to run instead of the original's.").minLength(1),
              Param.string("description", "A description instead of the original's.")
                  .maxLength(ExecutionRequest.MAX_DESCRIPTION_CHARS),
              Param.integer("timeout_seconds", "A wall-clock limit instead of the original's.")
                  .min(1)
                  .max(3600),
              Param.id(
                  "session_id",
                  "Run in this session (created if needed) instead of a fresh sandbox."),
              packages("Packages instead of the original's (PEP 508 requirements).")),
          RunRecord.class);

  public static final Operation DIFF_RUNS =
      new Operation(
          "diff_runs",
          "Compare two runs",
          "Compare a run with another (by default its parent): how they are related, unified"
              + " diffs of code and stdout, status, exit code, duration and memory changes, files"
              + " added, removed or changed (by sha256), __outputs__ changes, interpreter and"
              + " package changes, and a one-sentence summary.",
          READ,
          List.of(
              runId("The run to look at (run_ + 20 hex): the 'after' side."),
              Param.id(
                  "compare_to",
                  "The run to compare it with, the 'before' side (default: its parent).")),
          dev.pysandbox.api.RunDiff.class);

  public static final Operation DELETE_RUN =
      new Operation(
          "delete_run",
          "Delete a run",
          "Delete a finished run's record (a tombstone keeps its place in the tamper-evident hash"
              + " chain) and, unless delete_files is false, its kept files and notebooks. A run"
              + " still running is refused: cancel it first.",
          DESTRUCTIVE,
          List.of(
              runId("The run to delete (run_ + 20 hex)."),
              Param.bool("delete_files", "Also remove the run's files and notebooks from disk.")
                  .defaultValue(true)),
          dev.pysandbox.api.DeleteResult.class);

  public static final Operation PURGE_RUNS =
      new Operation(
          "purge_runs",
          "Purge old runs",
          "Delete finished runs created more than older_than_days days ago (optionally only in"
              + " one state), with their files. dry_run (the default) only counts what would go"
              + " and the bytes it would free.",
          DESTRUCTIVE,
          List.of(
              Param.integer("older_than_days", "Runs created more than this many days ago.")
                  .required()
                  .min(0)
                  .max(dev.pysandbox.api.PurgeResult.MAX_DAYS),
              Param.string("status", "Only runs in this state.").oneOf(FINISHED_STATUSES),
              Param.bool("dry_run", "Count only; change nothing.").defaultValue(true)),
          dev.pysandbox.api.PurgeResult.class);

  public static final Operation EXPORT_SESSION =
      new Operation(
          "export_session",
          "Export a session as a notebook",
          "All of a session's recorded runs as one notebook, in the order they ran, failed runs"
              + " marked: Jupyter (.ipynb) or marimo (.py, which also runs with plain python)."
              + " Written under the server's exports/ directory; the content comes back when it"
              + " is at most 5 MB. Works for closed sessions while their runs are kept.",
          WRITE,
          List.of(
              sessionId(),
              Param.string("format", "ipynb or marimo.")
                  .oneOf(List.of("ipynb", "marimo"))
                  .defaultValue("ipynb")),
          dev.pysandbox.api.SessionExport.class);

  // -- approvals ---------------------------------------------------------------------------------

  public static final Operation LIST_PENDING_APPROVALS =
      new Operation(
          "list_pending_approvals",
          "List runs waiting for approval",
          "Runs held for a person's approval (awaiting_approval), oldest first, with why each"
              + " waits, its findings and when its approval expires. Read-only: a person"
              + " decides, not the agent.",
          READ,
          List.of(),
          dev.pysandbox.api.ApprovalList.class);

  public static final Operation APPROVE_RUN =
      new Operation(
          "approve_run",
          "Approve a held run",
          "Approve a run held for approval: it then runs (get_run with wait_seconds reads its"
              + " result). Only on servers started with agent_may_approve=true: the agent then"
              + " decides its own runs, which is weaker than a person deciding.",
          WRITE,
          List.of(approvalId(), Param.string("reason", "Why (kept with the decision).")),
          RunRecord.class);

  public static final Operation DENY_RUN =
      new Operation(
          "deny_run",
          "Deny a held run",
          "Deny a run held for approval: it ends denied and never runs. Only on servers started"
              + " with agent_may_approve=true.",
          DESTRUCTIVE,
          List.of(approvalId(), Param.string("reason", "Why (kept with the decision).")),
          RunRecord.class);

  /** The tools an agent gets only when the server allows agents to decide approvals. */
  public static final List<Operation> AGENT_APPROVALS = List.of(APPROVE_RUN, DENY_RUN);

  // -- security events ---------------------------------------------------------------------------

  /** The kinds of security event, by wire name. */
  public static final List<String> SECURITY_EVENT_KINDS =
      Stream.of(dev.pysandbox.api.SecurityEvent.Kind.values())
          .map(dev.pysandbox.api.SecurityEvent.Kind::wireName)
          .toList();

  public static final Operation LIST_SECURITY_EVENTS =
      new Operation(
          "list_security_events",
          "List security events",
          "List security events of your runs and sessions, newest first: approvals requested,"
              + " approved, denied and expired; runs stopped by a limit (limit: timeout,"
              + " memory_limit, pids_limit, disk_quota, output_limit, protocol_violation); denied"
              + " imports and network attempts; sandboxes that died unexpectedly. Each has a kind,"
              + " a time, the session and run it concerns and a detail object. Page with"
              + " next_cursor.",
          READ,
          List.of(
              Param.string(
                  "since",
                  "Only events since then: an age (30s, 10m, 2h, 7d, PT1H) or an ISO-8601 instant"
                      + " (2026-11-25T15:00:00Z)."),
              Param.string("kind", "Only events of this kind.").oneOf(SECURITY_EVENT_KINDS),
              Param.id("session_id", "Only events of this session."),
              Param.integer("limit", "Events per page (1-1000).")
                  .min(1)
                  .max(dev.pysandbox.api.SecurityEventQuery.MAX_LIMIT)
                  .defaultValue(dev.pysandbox.api.SecurityEventQuery.DEFAULT_LIMIT),
              Param.string("cursor", "The next_cursor of the page before, for older events.")
                  .pattern(dev.pysandbox.api.SecurityEventQuery.CURSOR_REGEX)),
          dev.pysandbox.api.SecurityEventList.class);

  public static final Operation CHECK_SETUP =
      new Operation(
          "check_setup",
          "Check the setup",
          "Report the sandbox backend, the Python interpreter and its packages, the limits in"
              + " force, the tiers (each one's network, host directories, import policy and"
              + " default limits; the default and those allowed), the data directory, and what is"
              + " missing with how to install it.",
          READ,
          List.of(),
          SetupReport.class);

  // -- sessions ----------------------------------------------------------------------------------

  public static final Operation CREATE_SESSION =
      new Operation(
          "create_session",
          "Create a session",
          "Open a stateful Python session: variables and files in /mnt/data persist between"
              + " run_python calls that name it. Returns the session (an existing one with the"
              + " same id is returned as it is).",
          IDEMPOTENT_WRITE,
          List.of(
              Param.id("session_id", "Omit to get a generated sess_ + 12 hex id."),
              Param.integer(
                      "ttl_minutes", "Idle minutes before the session is closed (default 30).")
                  .min(1)
                  .max(SessionInfo.MAX_TTL_MINUTES),
              Param.id(
                  "tier",
                  "The session's tier, for its whole life: network, read-only host directories"
                      + " (/mnt/host/<name> in the filesystem tier), import policy and default"
                      + " limits (check_setup lists the tiers this server allows; default: the"
                      + " server's tier_default, basic). A tier the server does not allow is"
                      + " refused with forbidden."),
              Param.integer(
                      "memory_limit_mb",
                      "Memory of the session's sandbox in MiB, no swap (default: the tier's, 512"
                          + " in basic; check_setup shows the maximum). Passing it kills the process that"
                          + " allocates: the run ends with kill_reason memory_limit.")
                  .min(LimitRequest.MIN_MEMORY_MB),
              Param.integer(
                      "pids_limit",
                      "Processes and threads at once (default: the tier's, 128 in basic).")
                  .min(LimitRequest.MIN_PIDS),
              Param.number(
                      "cpu_limit",
                      "CPU cores the session may use (default: the tier's, 1 in basic).")
                  .min(LimitRequest.MIN_CPUS),
              Param.integer(
                      "disk_quota_mb",
                      "Total size of the files in /mnt/data in MiB (server default 1024).")
                  .min(LimitRequest.MIN_DISK_QUOTA_MB),
              packages(
                  "Packages the session's sandbox has for its whole life: PEP 508 requirements"
                      + " (at most 50; no URLs, paths or pip options), installed once into a"
                      + " cached environment through the server's package index and mounted"
                      + " read-only; the code still has no network."),
              Param.strings(
                  "network_allow",
                  "In a tier with network (network): the hosts the session's code may reach,"
                      + " narrower than the server's network_allow (each pattern must be covered"
                      + " by one of the server's; default: the server's list).")),
          SessionInfo.class);

  public static final Operation LIST_SESSIONS =
      new Operation(
          "list_sessions",
          "List sessions",
          "List open sessions with state, creation and last use, run count and workspace size;"
              + " with include_ended, also those that ended within the server's"
              + " session_retention (state closed, with ended: how — expired, closed, lost or"
              + " failed —, when and why), whose ids answer session_expired, session_closed or"
              + " session_lost until then.",
          READ,
          List.of(
              Param.bool(
                      "include_ended",
                      "Also list the sessions that ended within session_retention.")
                  .defaultValue(false)),
          SessionList.class);

  public static final Operation CLOSE_SESSION =
      new Operation(
          "close_session",
          "Close a session",
          "Kill a session's sandbox and delete its workspace.",
          DESTRUCTIVE,
          List.of(sessionId()),
          SessionInfo.class);

  public static final Operation GET_CONTEXT =
      new Operation(
          "get_context",
          "Get session variables",
          "Return a session's global variables: JSON values as they are, others as type and"
              + " repr.",
          READ,
          List.of(
              sessionId(),
              Param.strings("names", "Globals to return; omit for all (modules excluded).")),
          ContextSnapshot.class);

  public static final Operation SET_CONTEXT =
      new Operation(
          "set_context",
          "Set session variables",
          "Set global variables of a session from a JSON object.",
          IDEMPOTENT_WRITE,
          List.of(
              sessionId(),
              Param.object("values", "Each key becomes a global with its JSON value.").required()),
          ContextSnapshot.class);

  public static final Operation CLEAR_CONTEXT =
      new Operation(
          "clear_context",
          "Clear session variables",
          "Reset a session's globals (variables and imports are gone; files stay).",
          DESTRUCTIVE,
          List.of(sessionId()),
          SessionInfo.class);

  // -- files -------------------------------------------------------------------------------------

  /** What read_artifact refuses above unless the call says otherwise. */
  public static final long DEFAULT_MAX_SIZE_BYTES = 5_000_000;

  public static final Operation UPLOAD_FILE =
      new Operation(
          "upload_file",
          "Upload a file",
          "Write a file into a session's /mnt/data (the session is created if needed). Give"
              + " text as content or bytes as content_base64.",
          WRITE,
          List.of(
              Param.id(
                      "session_id",
                      "The session whose /mnt/data receives the file (created if needed).")
                  .required(),
              Param.string(
                      "filename",
                      "Where in /mnt/data: a name of letters, digits, '.', '_', '-', or a path"
                          + " with '/' between folders (made as needed), e.g. data/in.csv; no"
                          + " '..'.")
                  .pattern(UploadRequest.FILENAME_REGEX)
                  .required(),
              Param.string(
                  "content", "Text content (stored as UTF-8). Give this or content_base64."),
              Param.string(
                  "content_base64",
                  "Binary content, base64 (up to upload_max_bytes decoded, 50 MB by default)."),
              Param.bool("overwrite", "Replace a file of that name (else file_exists).")
                  .defaultValue(false)),
          UploadResult.class);

  public static final Operation DOWNLOAD_FILE =
      new Operation(
          "download_file",
          "Download a file",
          "Fetch a URL on the server, through its network policy (the hosts in network_allow;"
              + " never private or loopback addresses), into a session's /mnt/data (the session"
              + " is created if needed). The code itself keeps no network. Returns size, sha256"
              + " and content type; a refused host is forbidden with the reason.",
          WRITE,
          List.of(
              Param.id(
                      "session_id",
                      "The session whose /mnt/data receives the file (created if needed).")
                  .required(),
              Param.string("url", "An http or https URL.").required().minLength(1).maxLength(4096),
              Param.string(
                      "filename",
                      "Where in /mnt/data: a name of letters, digits, '.', '_', '-', or a path"
                          + " with '/' between folders (made as needed), e.g. data/in.csv; no"
                          + " '..'.")
                  .pattern(UploadRequest.FILENAME_REGEX)
                  .required(),
              Param.bool("overwrite", "Replace a file of that name (else file_exists).")
                  .defaultValue(false)),
          DownloadResult.class);

  public static final Operation LIST_ENVIRONMENTS =
      new Operation(
          "list_environments",
          "List package environments",
          "List the cached package environments your runs and sessions used: key, requirements,"
              + " size, created, last used, runs, whether a sandbox has one now, pip freeze.",
          READ,
          List.of(),
          EnvironmentList.class);

  public static final Operation CLEAN_ENVIRONMENTS =
      new Operation(
          "clean_environments",
          "Remove unused package environments",
          "Remove cached package environments not used for older_than_days days (never one a"
              + " sandbox has). dry_run (default true) only says what would be removed; a"
              + " removed environment is built again when a run asks for it.",
          DESTRUCTIVE,
          List.of(
              Param.integer("older_than_days", "Remove those unused for this many days (0: any).")
                  .min(0)
                  .max(36_500)
                  .required(),
              Param.bool("dry_run", "Only say what would be removed.").defaultValue(true)),
          EnvironmentCleanResult.class);

  public static final Operation LIST_ARTIFACTS =
      new Operation(
          "list_artifacts",
          "List files",
          "List the files of a session's workspace (session_id) or those a run kept (run_id),"
              + " with size, sha256 and media type.",
          READ,
          List.of(
              Param.id(
                  "session_id", "List the session's workspace as it is now. Give this or run_id."),
              Param.id("run_id", "List the files the run kept, as it left them.")),
          ArtifactList.class);

  public static final Operation READ_ARTIFACT =
      new Operation(
          "read_artifact",
          "Read a file",
          "Read one file of a session's workspace or of a run: text comes back as content,"
              + " anything else as content_base64. Symbolic links are never followed.",
          READ,
          List.of(
              Param.id("session_id", "Read from the session's workspace. Give this or run_id."),
              Param.id("run_id", "Read the file as the run left it."),
              Param.string("path", "Relative to /mnt/data, e.g. out/chart.png.").required(),
              Param.longInteger(
                      "max_size_bytes",
                      "Refuse a larger file (artifact_too_large); capped at the server's"
                          + " read_max_bytes (16 MiB unless configured).")
                  .min(1)
                  .defaultValue(DEFAULT_MAX_SIZE_BYTES)),
          ArtifactContent.class);

  /** Every operation, in the order tools/list shows them. */
  public static final List<Operation> ALL =
      List.of(
          RUN_PYTHON,
          VALIDATE_CODE,
          CANCEL_RUN,
          LIST_RUNS,
          GET_RUN,
          GET_RUN_OUTPUTS,
          RERUN,
          DIFF_RUNS,
          DELETE_RUN,
          PURGE_RUNS,
          EXPORT_SESSION,
          LIST_PENDING_APPROVALS,
          LIST_SECURITY_EVENTS,
          CHECK_SETUP,
          CREATE_SESSION,
          LIST_SESSIONS,
          CLOSE_SESSION,
          GET_CONTEXT,
          SET_CONTEXT,
          CLEAR_CONTEXT,
          UPLOAD_FILE,
          DOWNLOAD_FILE,
          LIST_ARTIFACTS,
          READ_ARTIFACT,
          LIST_ENVIRONMENTS,
          CLEAN_ENVIRONMENTS);

  /** The operation named {@code name} (of {@link #ALL} or {@link #AGENT_APPROVALS}), or null. */
  public static Operation named(String name) {
    return Stream.concat(ALL.stream(), AGENT_APPROVALS.stream())
        .filter(o -> o.name().equals(name))
        .findFirst()
        .orElse(null);
  }

  private static Param packages(String description) {
    return Param.strings("packages", description);
  }

  private static Param approvalId() {
    return Param.id("approval_id", "The approval's id (apr_ + 16 hex).").required();
  }

  private static Param runId(String description) {
    return Param.id("run_id", description).required();
  }

  private static Param sessionId() {
    return Param.id("session_id", "The session's id.").required();
  }
}

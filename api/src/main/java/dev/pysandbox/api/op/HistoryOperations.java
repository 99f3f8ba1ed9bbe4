package dev.pysandbox.api.op;

import static dev.pysandbox.api.op.CommonParams.approvalId;
import static dev.pysandbox.api.op.CommonParams.packages;
import static dev.pysandbox.api.op.CommonParams.runId;
import static dev.pysandbox.api.op.CommonParams.sessionId;
import static dev.pysandbox.api.op.Operation.Effect.DESTRUCTIVE;
import static dev.pysandbox.api.op.Operation.Effect.READ;
import static dev.pysandbox.api.op.Operation.Effect.WRITE;

import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SetupReport;
import java.util.List;
import java.util.stream.Stream;

/**
 * The operations on the run history and its oversight: rerun, diff_runs, delete_run, purge_runs,
 * export_session, the approvals, the security events and check_setup. Part of the catalogue {@link
 * Operations}, which names them all.
 */
final class HistoryOperations {
  private HistoryOperations() {}

  // -- audit -------------------------------------------------------------------------------------

  /** The states a finished run can be in (what purge_runs may choose by). */
  public static final List<String> FINISHED_STATUSES =
      RunOperations.LISTED_STATUSES.stream()
          .filter(s -> !s.equals(RunStatus.RUNNING.wireName()))
          .toList();

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

  private static final Param DECISION_REASON =
      Param.string("reason", "Why (kept with the decision).");

  public static final Operation APPROVE_RUN =
      new Operation(
          "approve_run",
          "Approve a held run",
          "Approve a run held for approval: it then runs (get_run with wait_seconds reads its"
              + " result). Only on servers started with agent_may_approve=true: the agent then"
              + " decides its own runs, which is weaker than a person deciding.",
          WRITE,
          List.of(approvalId(), DECISION_REASON),
          RunRecord.class);

  public static final Operation DENY_RUN =
      new Operation(
          "deny_run",
          "Deny a held run",
          "Deny a run held for approval: it ends denied and never runs. Only on servers started"
              + " with agent_may_approve=true.",
          DESTRUCTIVE,
          List.of(approvalId(), DECISION_REASON),
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
}

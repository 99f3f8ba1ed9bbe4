package dev.pysandbox.api.op;

import static dev.pysandbox.api.op.CommonParams.packages;
import static dev.pysandbox.api.op.CommonParams.runId;
import static dev.pysandbox.api.op.Operation.Effect.DESTRUCTIVE;
import static dev.pysandbox.api.op.Operation.Effect.READ;
import static dev.pysandbox.api.op.Operation.Effect.WRITE;

import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunOutputs;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.ValidationReport;
import java.util.List;
import java.util.stream.Stream;

/**
 * The operations that run code and read runs: run_python, validate_code, cancel_run, list_runs,
 * get_run, get_run_outputs. Part of the catalogue {@link Operations}, which names them all.
 */
final class RunOperations {
  private RunOperations() {}

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
}

package dev.pysandbox.api.op;

import java.util.List;
import java.util.stream.Stream;

/**
 * Every operation the faces expose, declared once (the MCP tool surface of ARCHITECTURE.md), named
 * here; the declarations are written by role in {@link RunOperations}, {@link HistoryOperations},
 * {@link SessionOperations}, {@link FileOperations} and {@link AgentOperations}. Limits come from
 * the constants the request values check them with; the few that depend on the server's
 * configuration (timeout_seconds, code size) show the built-in default.
 */
public final class Operations {
  private Operations() {}

  public static final List<String> LISTED_STATUSES = RunOperations.LISTED_STATUSES;
  public static final Operation RUN_PYTHON = RunOperations.RUN_PYTHON;
  public static final Operation VALIDATE_CODE = RunOperations.VALIDATE_CODE;
  public static final Operation CANCEL_RUN = RunOperations.CANCEL_RUN;
  public static final Operation LIST_RUNS = RunOperations.LIST_RUNS;
  public static final Operation GET_RUN = RunOperations.GET_RUN;
  public static final Operation GET_RUN_OUTPUTS = RunOperations.GET_RUN_OUTPUTS;
  public static final List<String> FINISHED_STATUSES = HistoryOperations.FINISHED_STATUSES;
  public static final Operation RERUN = HistoryOperations.RERUN;
  public static final Operation DIFF_RUNS = HistoryOperations.DIFF_RUNS;
  public static final Operation DELETE_RUN = HistoryOperations.DELETE_RUN;
  public static final Operation PURGE_RUNS = HistoryOperations.PURGE_RUNS;
  public static final Operation EXPORT_SESSION = HistoryOperations.EXPORT_SESSION;
  public static final Operation LIST_PENDING_APPROVALS = HistoryOperations.LIST_PENDING_APPROVALS;
  public static final Operation APPROVE_RUN = HistoryOperations.APPROVE_RUN;
  public static final Operation DENY_RUN = HistoryOperations.DENY_RUN;
  public static final List<Operation> AGENT_APPROVALS = HistoryOperations.AGENT_APPROVALS;
  public static final List<String> SECURITY_EVENT_KINDS = HistoryOperations.SECURITY_EVENT_KINDS;
  public static final Operation LIST_SECURITY_EVENTS = HistoryOperations.LIST_SECURITY_EVENTS;
  public static final Operation CHECK_SETUP = HistoryOperations.CHECK_SETUP;
  public static final Operation CREATE_SESSION = SessionOperations.CREATE_SESSION;
  public static final Operation LIST_SESSIONS = SessionOperations.LIST_SESSIONS;
  public static final Operation CLOSE_SESSION = SessionOperations.CLOSE_SESSION;
  public static final Operation GET_CONTEXT = SessionOperations.GET_CONTEXT;
  public static final Operation SET_CONTEXT = SessionOperations.SET_CONTEXT;
  public static final Operation CLEAR_CONTEXT = SessionOperations.CLEAR_CONTEXT;
  public static final long DEFAULT_MAX_SIZE_BYTES = FileOperations.DEFAULT_MAX_SIZE_BYTES;
  public static final Operation UPLOAD_FILE = FileOperations.UPLOAD_FILE;
  public static final Operation DOWNLOAD_FILE = FileOperations.DOWNLOAD_FILE;
  public static final Operation LIST_ENVIRONMENTS = FileOperations.LIST_ENVIRONMENTS;
  public static final Operation CLEAN_ENVIRONMENTS = FileOperations.CLEAN_ENVIRONMENTS;
  public static final Operation LIST_ARTIFACTS = FileOperations.LIST_ARTIFACTS;
  public static final Operation READ_ARTIFACT = FileOperations.READ_ARTIFACT;
  public static final List<String> AGENT_STATUSES = AgentOperations.AGENT_STATUSES;
  public static final Operation AGENT_RUN = AgentOperations.AGENT_RUN;
  public static final Operation AGENT_STATUS = AgentOperations.AGENT_STATUS;
  public static final Operation AGENT_CANCEL = AgentOperations.AGENT_CANCEL;
  public static final Operation LIST_AGENT_RUNS = AgentOperations.LIST_AGENT_RUNS;

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
          CLEAN_ENVIRONMENTS,
          AGENT_RUN,
          AGENT_STATUS,
          AGENT_CANCEL,
          LIST_AGENT_RUNS);

  /** The operation named {@code name} (of {@link #ALL} or {@link #AGENT_APPROVALS}), or null. */
  public static Operation named(String name) {
    return Stream.concat(ALL.stream(), AGENT_APPROVALS.stream())
        .filter(o -> o.name().equals(name))
        .findFirst()
        .orElse(null);
  }
}

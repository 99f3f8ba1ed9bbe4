package dev.pysandbox.api.op;

import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.RerunRequest;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import dev.pysandbox.api.SessionList;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.WireEnum;
import java.util.HashMap;
import java.util.Map;

/**
 * What each operation does, written once: from its parsed {@link Arguments} to the core call and
 * the result its faces answer with. MCP (stdio and HTTP) and REST call these; each face adds only
 * its presentation (MCP's text content and images, REST's status and headers).
 */
public final class OperationCalls {
  /** One operation's call. */
  @FunctionalInterface
  public interface Call {
    /**
     * @param listener told the run's id as soon as it is recorded (run_python; others ignore it)
     * @return the result, of the operation's {@link Operation#result()} type
     */
    Object call(SandboxService service, Arguments args, RunListener listener);
  }

  private static final Map<String, Call> CALLS = new HashMap<>();

  static {
    AgentOperations.bind(OperationCalls::bind);
    bind(
        Operations.RUN_PYTHON,
        (s, a, listener) ->
            a.bool("async_mode")
                ? s.start(executionRequest(a), listener)
                : s.run(executionRequest(a), listener));
    bind(Operations.VALIDATE_CODE, (s, a, l) -> s.validateCode(a.string("code")));
    bind(Operations.CANCEL_RUN, (s, a, l) -> s.cancelRun(a.string("run_id")));
    bind(Operations.LIST_RUNS, (s, a, l) -> s.listRuns(runQuery(a)));
    bind(
        Operations.GET_RUN,
        (s, a, l) ->
            s.getRun(
                a.string("run_id"),
                a.bool("include_code"),
                a.integer("wait_seconds"),
                a.bool("include_notebook_source")));
    bind(
        Operations.RERUN,
        (s, a, l) ->
            s.rerun(
                new RerunRequest(
                    a.string("run_id"),
                    a.string("code"),
                    a.string("description"),
                    a.integer("timeout_seconds"),
                    a.string("session_id"),
                    a.strings("packages")),
                l));
    bind(Operations.DIFF_RUNS, (s, a, l) -> s.diffRuns(a.string("run_id"), a.string("compare_to")));
    bind(
        Operations.DELETE_RUN,
        (s, a, l) -> s.deleteRun(a.string("run_id"), a.bool("delete_files")));
    bind(
        Operations.PURGE_RUNS,
        (s, a, l) -> {
          String status = a.string("status");
          return s.purgeRuns(
              a.integer("older_than_days"),
              status == null ? null : WireEnum.parse(RunStatus.class, status),
              Boolean.TRUE.equals(a.bool("dry_run")));
        });
    bind(Operations.LIST_PENDING_APPROVALS, (s, a, l) -> s.listPendingApprovals());
    // The agent's own decisions: bound for the servers that allow them (agent_may_approve).
    bind(
        Operations.APPROVE_RUN,
        (s, a, l) ->
            s.decideApproval(a.string("approval_id"), true, "agent", "agent", a.string("reason")));
    bind(
        Operations.DENY_RUN,
        (s, a, l) ->
            s.decideApproval(a.string("approval_id"), false, "agent", "agent", a.string("reason")));
    bind(
        Operations.EXPORT_SESSION,
        (s, a, l) -> s.exportSession(a.string("session_id"), a.string("format")));
    bind(Operations.GET_RUN_OUTPUTS, (s, a, l) -> s.getRunOutputs(a.string("run_id")));
    bind(Operations.LIST_SECURITY_EVENTS, (s, a, l) -> s.listSecurityEvents(securityEventQuery(a)));
    bind(Operations.CHECK_SETUP, (s, a, l) -> s.checkSetup());
    bind(
        Operations.CREATE_SESSION,
        (s, a, l) ->
            s.createSession(
                a.string("session_id"),
                a.integer("ttl_minutes"),
                new LimitRequest(
                    a.integer("memory_limit_mb"),
                    a.integer("pids_limit"),
                    a.number("cpu_limit"),
                    a.integer("disk_quota_mb")),
                a.string("tier"),
                a.strings("packages"),
                a.strings("network_allow")));
    bind(
        Operations.LIST_SESSIONS,
        (s, a, l) -> new SessionList(s.listSessions(Boolean.TRUE.equals(a.bool("include_ended")))));
    bind(Operations.CLOSE_SESSION, (s, a, l) -> s.closeSession(a.string("session_id")));
    bind(
        Operations.GET_CONTEXT,
        (s, a, l) -> s.getContext(a.string("session_id"), a.strings("names")));
    bind(
        Operations.SET_CONTEXT,
        (s, a, l) -> s.setContext(a.string("session_id"), a.object("values")));
    bind(Operations.CLEAR_CONTEXT, (s, a, l) -> s.clearContext(a.string("session_id")));
    bind(
        Operations.UPLOAD_FILE,
        (s, a, l) ->
            s.uploadFile(
                new UploadRequest(
                    a.string("session_id"),
                    a.string("filename"),
                    a.string("content"),
                    a.string("content_base64"),
                    a.bool("overwrite"))));
    bind(
        Operations.DOWNLOAD_FILE,
        (s, a, l) ->
            s.downloadFile(
                a.string("session_id"),
                a.string("url"),
                a.string("filename"),
                a.bool("overwrite")));
    bind(Operations.LIST_ENVIRONMENTS, (s, a, l) -> s.listEnvironments());
    bind(
        Operations.CLEAN_ENVIRONMENTS,
        (s, a, l) ->
            s.cleanEnvironments(
                a.integer("older_than_days"), !Boolean.FALSE.equals(a.bool("dry_run"))));
    bind(
        Operations.LIST_ARTIFACTS,
        (s, a, l) -> s.listArtifacts(a.string("run_id"), a.string("session_id")));
    bind(
        Operations.READ_ARTIFACT,
        (s, a, l) ->
            s.readArtifact(
                a.string("run_id"),
                a.string("session_id"),
                a.string("path"),
                a.longInteger("max_size_bytes")));
  }

  private OperationCalls() {}

  /** list_runs' query, from its arguments (also for a face's listing of every tenant's). */
  public static RunQuery runQuery(Arguments a) {
    String status = a.string("status");
    return new RunQuery(
        a.integer("limit"),
        a.integer("offset"),
        status == null ? null : WireEnum.parse(RunStatus.class, status),
        a.string("session_id"));
  }

  /** list_security_events' query, from its arguments. */
  public static SecurityEventQuery securityEventQuery(Arguments a) {
    String kind = a.string("kind");
    return new SecurityEventQuery(
        a.string("since"),
        kind == null ? null : WireEnum.parse(SecurityEvent.Kind.class, kind),
        a.string("session_id"),
        a.integer("limit"),
        a.string("cursor"));
  }

  private static ExecutionRequest executionRequest(Arguments a) {
    return new ExecutionRequest(
        a.string("code"),
        a.string("session_id"),
        a.string("description"),
        a.integer("timeout_seconds"),
        a.string("tier"),
        // false leaves it to the server's approval_policy: an agent cannot opt out of it.
        a.bool("require_approval") ? Boolean.TRUE : null,
        Boolean.TRUE.equals(a.bool("dry_run")),
        a.strings("packages"));
  }

  /**
   * run_python as a run that goes on without its caller, whatever {@code async_mode} says: for a
   * face that streams the run's events to its caller (REST's NDJSON and SSE answers).
   *
   * @param args arguments parsed against run_python
   * @return the run as it began ({@code running})
   */
  public static RunRecord start(SandboxService service, Arguments args, RunListener listener) {
    return service.start(executionRequest(args), listener);
  }

  /** Whether {@code op} has its call here. */
  public static boolean has(Operation op) {
    return CALLS.containsKey(op.name());
  }

  private static void bind(Operation op, Call call) {
    CALLS.put(op.name(), call);
  }

  /**
   * Calls {@code op} on {@code service}.
   *
   * @param args arguments parsed against {@code op} (or an operation narrowed from it)
   * @throws IllegalArgumentException for an operation that has no call here
   */
  @SuppressWarnings("unchecked")
  public static <T> T call(
      Operation op, SandboxService service, Arguments args, RunListener listener) {
    Call c = CALLS.get(op.name());
    if (c == null) {
      throw new IllegalArgumentException("no call for the operation " + op.name());
    }
    return (T) c.call(service, args, listener);
  }

  /** {@link #call(Operation, SandboxService, Arguments, RunListener)} without a listener. */
  public static <T> T call(Operation op, SandboxService service, Arguments args) {
    return call(op, service, args, RunListener.NONE);
  }
}

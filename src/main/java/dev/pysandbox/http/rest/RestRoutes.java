package dev.pysandbox.http.rest;

import static dev.pysandbox.http.rest.RestOperations.narrowed;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.ResultOutputLimit;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import dev.pysandbox.http.Caller;
import dev.pysandbox.http.HttpFace;
import dev.pysandbox.http.rest.Route.Input;
import dev.pysandbox.http.rest.Route.Output;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The route table of {@code /api/v1}: each route a declared operation bound to a method and a path,
 * and a handler that is a thin mapping from the parsed arguments to the core call the MCP tool of
 * the same operation makes. Nothing here decides anything the core decides.
 */
final class RestRoutes {
  private RestRoutes() {}

  static List<Route> all(RestLimits limits) {
    List<Route> all = new ArrayList<>();
    all.addAll(runs(limits.resultOutputLimit()));
    all.addAll(sessions());
    all.addAll(FileRoutes.all(limits.uploadMaxBytes()));
    all.addAll(approvals());
    all.add(
        route(
            "check_setup",
            "GET",
            "/setup",
            Operations.CHECK_SETUP,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.CHECK_SETUP, c.service(), c.args())));
    return all;
  }

  private static List<Route> runs(int resultOutputLimit) {
    return List.of(
        new Route(
            "run_python",
            "POST",
            PathTemplate.of("/runs"),
            Operations.RUN_PYTHON,
            Input.JSON_FIELDS,
            Output.JSON_OR_EVENTS,
            201,
            c -> runPython(c, resultOutputLimit)),
        new Route(
            "get_run_events",
            "GET",
            PathTemplate.of("/runs/{run_id}/events"),
            RestOperations.RUN_EVENTS,
            Input.QUERY,
            Output.EVENTS,
            200,
            c -> {
              EventStream.Format stream = EventStream.Format.wanted(c.request());
              long after = lastEventId(c);
              String runId = c.args().string("run_id");
              if (c.request().getMethod().equals("HEAD")) {
                c.service().getRun(runId, false);
                c.response().setStatus(200);
                c.response()
                    .setContentType(
                        (stream == null ? EventStream.Format.NDJSON : stream).mediaType);
                return null;
              }
              EventStream.open(
                  c.request(),
                  c.response(),
                  stream == null ? EventStream.Format.NDJSON : stream,
                  resultOutputLimit,
                  sink -> c.service().attach(runId, after, sink),
                  null);
              return null;
            }),
        route(
            "list_runs",
            "GET",
            "/runs",
            Operations.LIST_RUNS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.LIST_RUNS, c.service(), c.args())),
        route(
            "validate_code",
            "POST",
            "/validate",
            Operations.VALIDATE_CODE,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.VALIDATE_CODE, c.service(), c.args())),
        route(
            "get_run",
            "GET",
            "/runs/{run_id}",
            Operations.GET_RUN,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.GET_RUN, c.service(), c.args())),
        route(
            "get_run_outputs",
            "GET",
            "/runs/{run_id}/outputs",
            Operations.GET_RUN_OUTPUTS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.GET_RUN_OUTPUTS, c.service(), c.args())),
        route(
            "cancel_run",
            "POST",
            "/runs/{run_id}/cancel",
            Operations.CANCEL_RUN,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.CANCEL_RUN, c.service(), c.args())),
        route(
            "rerun",
            "POST",
            "/runs/{run_id}/rerun",
            Operations.RERUN,
            Input.JSON_FIELDS,
            201,
            c -> {
              RunRecord r = cancelledIfClientGoes(c, Operations.RERUN);
              Map<String, Object> json = Json.toMap(r);
              ResultOutputLimit.apply(json, resultOutputLimit);
              location(c, r.runId());
              return json;
            }),
        route(
            "diff_runs",
            "GET",
            "/runs/{run_id}/diff",
            Operations.DIFF_RUNS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.DIFF_RUNS, c.service(), c.args())),
        route(
            "delete_run",
            "DELETE",
            "/runs/{run_id}",
            Operations.DELETE_RUN,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.DELETE_RUN, c.service(), c.args())),
        route(
            "purge_runs",
            "POST",
            "/runs/purge",
            Operations.PURGE_RUNS,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.PURGE_RUNS, c.service(), c.args())),
        route(
            "list_security_events",
            "GET",
            "/security-events",
            Operations.LIST_SECURITY_EVENTS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.LIST_SECURITY_EVENTS, c.service(), c.args())),
        route(
            "list_environments",
            "GET",
            "/environments",
            Operations.LIST_ENVIRONMENTS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.LIST_ENVIRONMENTS, c.service(), c.args())),
        route(
            "clean_environments",
            "POST",
            "/environments/clean",
            Operations.CLEAN_ENVIRONMENTS,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.CLEAN_ENVIRONMENTS, c.service(), c.args())));
  }

  /**
   * POST /runs: the run's JSON when it ends, or at once as it begins ({@code async_mode}), or its
   * events as they come ({@code Accept}). Unless {@code async_mode} asked for a run that goes on
   * without its caller, a client that goes away cancels its run ({@link DisconnectWatch}).
   */
  private static Object runPython(Route.Call c, int resultOutputLimit) throws IOException {
    EventStream.Format stream = EventStream.Format.wanted(c.request());
    boolean async = Boolean.TRUE.equals(c.args().bool("async_mode"));
    if (Boolean.TRUE.equals(c.args().bool("dry_run"))) {
      // Nothing runs and nothing is recorded: the analysis, at once, with no Location.
      RunRecord r = OperationCalls.call(Operations.RUN_PYTHON, c.service(), c.args());
      return new Route.Reply(200, Json.toMap(r));
    }
    if (stream != null) {
      // Streamed: the request only watches the run, which is started apart from it.
      RunRecord begun = OperationCalls.start(c.service(), c.args(), RunListener.NONE);
      location(c, begun.runId());
      EventStream.open(
          c.request(),
          c.response(),
          stream,
          resultOutputLimit,
          sink -> c.service().attach(begun.runId(), 0, sink),
          async ? null : () -> DisconnectWatch.cancel(c.service(), begun.runId()));
      return null;
    }
    RunRecord r =
        async
            ? OperationCalls.call(Operations.RUN_PYTHON, c.service(), c.args())
            : cancelledIfClientGoes(c, Operations.RUN_PYTHON);
    Map<String, Object> json = Json.toMap(r);
    ResultOutputLimit.apply(json, resultOutputLimit);
    location(c, r.runId());
    return async ? new Route.Reply(202, json) : json;
  }

  /**
   * Calls {@code op}, which runs code and answers when it ends, cancelling its run if the client
   * closes the connection meanwhile ({@link DisconnectWatch}).
   */
  private static RunRecord cancelledIfClientGoes(Route.Call c, Operation op) {
    try (DisconnectWatch watch = DisconnectWatch.start(c.request())) {
      RunRecord r = OperationCalls.call(op, c.service(), c.args(), watch.cancelling(c.service()));
      if (watch.mustClose()) {
        // The watch read bytes of the client's next request: this connection serves no other.
        c.response().setHeader("Connection", "close");
      }
      return r;
    }
  }

  private static void location(Route.Call c, String runId) {
    c.request().setAttribute(RestServlet.RUN_ID_ATTRIBUTE, runId);
    c.response()
        .setHeader(
            "Location",
            c.request().getContextPath() + c.request().getServletPath() + "/runs/" + runId);
  }

  /** Where an attach resumes: {@code after}, or the {@code Last-Event-ID} header, or 0. */
  private static long lastEventId(Route.Call c) {
    Long after = c.args().longInteger("after");
    String header = c.request().getHeader("Last-Event-ID");
    if (after != null) {
      return after;
    }
    if (header == null || header.isBlank()) {
      return 0;
    }
    try {
      return Long.parseLong(header.trim());
    } catch (NumberFormatException e) {
      throw PysandboxException.invalid(
          "Last-Event-ID must be the number of an event (its id: line), got '" + header + "'");
    }
  }

  private static List<Route> approvals() {
    return List.of(
        route(
            "list_pending_approvals",
            "GET",
            "/approvals",
            Operations.LIST_PENDING_APPROVALS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.LIST_PENDING_APPROVALS, c.service(), c.args())),
        route(
            "get_approval",
            "GET",
            "/approvals/{approval_id}",
            RestOperations.GET_APPROVAL,
            Input.QUERY,
            200,
            c -> c.service().getApproval(c.args().string("approval_id"))),
        route(
            "approve_run",
            "POST",
            "/approvals/{approval_id}/approve",
            Operations.APPROVE_RUN,
            Input.JSON_FIELDS,
            200,
            c -> decide(c, true)),
        route(
            "deny_run",
            "POST",
            "/approvals/{approval_id}/deny",
            Operations.DENY_RUN,
            Input.JSON_FIELDS,
            200,
            c -> decide(c, false)));
  }

  /**
   * A decision by an approver's key (never an agent's: the agent cannot approve its own run), on
   * behalf of the key ({@code key:<key id>}).
   */
  private static RunRecord decide(Route.Call c, boolean approve) {
    if (!(c.request().getAttribute(HttpFace.CALLER_ATTRIBUTE) instanceof Caller caller)
        || !caller.approver()) {
      throw new PysandboxException(
          ErrorCode.FORBIDDEN,
          "only a key made with --role approver may decide approvals (pysandbox keys create"
              + " --tenant T --role approver); a person can also decide with pysandbox approvals"
              + " approve|deny on the server's host");
    }
    return c.service()
        .decideApproval(
            c.args().string("approval_id"),
            approve,
            "key:" + caller.keyId(),
            "rest",
            c.args().string("reason"));
  }

  private static List<Route> sessions() {
    return List.of(
        route(
            "create_session",
            "POST",
            "/sessions",
            Operations.CREATE_SESSION,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.CREATE_SESSION, c.service(), c.args())),
        route(
            "list_sessions",
            "GET",
            "/sessions",
            Operations.LIST_SESSIONS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.LIST_SESSIONS, c.service(), c.args())),
        route(
            "get_session",
            "GET",
            "/sessions/{session_id}",
            RestOperations.GET_SESSION,
            Input.QUERY,
            200,
            c -> {
              String id = Ids.requireSessionId(c.args().string("session_id"));
              for (SessionInfo s : c.service().listSessions()) {
                if (s.sessionId().equals(id)) {
                  return s;
                }
              }
              throw new PysandboxException(
                  ErrorCode.NOT_FOUND,
                  "no open session '" + id + "' (create it with POST /sessions)");
            }),
        route(
            "close_session",
            "DELETE",
            "/sessions/{session_id}",
            Operations.CLOSE_SESSION,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.CLOSE_SESSION, c.service(), c.args())),
        route(
            "get_context",
            "GET",
            "/sessions/{session_id}/context",
            Operations.GET_CONTEXT,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.GET_CONTEXT, c.service(), c.args())),
        route(
            "set_context",
            "PUT",
            "/sessions/{session_id}/context",
            Operations.SET_CONTEXT,
            Input.JSON_VALUES,
            200,
            c -> OperationCalls.call(Operations.SET_CONTEXT, c.service(), c.args())),
        route(
            "clear_context",
            "DELETE",
            "/sessions/{session_id}/context",
            Operations.CLEAR_CONTEXT,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.CLEAR_CONTEXT, c.service(), c.args())),
        route(
            "export_session",
            "POST",
            "/sessions/{session_id}/export",
            Operations.EXPORT_SESSION,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.EXPORT_SESSION, c.service(), c.args())),
        route(
            "download_file",
            "POST",
            "/sessions/{session_id}/download",
            Operations.DOWNLOAD_FILE,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.DOWNLOAD_FILE, c.service(), c.args())));
  }

  /** A route answering with the JSON of {@code op}'s result. */
  static Route route(
      String id,
      String method,
      String path,
      Operation op,
      Input input,
      int status,
      Route.Handler handler) {
    return new Route(id, method, PathTemplate.of(path), op, input, Output.JSON, status, handler);
  }

  /** {@code op} narrowed to the arguments named (see {@link RestOperations#narrowed}). */
  static Operation only(Operation op, String path, String... names) {
    return narrowed(op, PathTemplate.of(path).variables(), names);
  }
}

package dev.pysandbox.http.rest;

import static dev.pysandbox.http.rest.RestOperations.narrowed;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import dev.pysandbox.http.Caller;
import dev.pysandbox.http.HttpFace;
import dev.pysandbox.http.rest.Route.Input;
import dev.pysandbox.http.rest.Route.Output;
import dev.pysandbox.util.ThreadInterrupter;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The route table of {@code /api/v1}: each route a declared operation bound to a method and a path,
 * and a handler that is a thin mapping from the parsed arguments to the core call the MCP tool of
 * the same operation makes. Nothing here decides anything the core decides.
 */
final class RestRoutes {
  private RestRoutes() {}

  static List<Route> all(RestLimits limits) {
    List<Route> all = new ArrayList<>();
    all.addAll(RunRoutes.all(limits.resultOutputLimit()));
    all.addAll(sessions());
    all.addAll(FileRoutes.all(limits.uploadMaxBytes()));
    all.addAll(approvals());
    all.addAll(AgentRoutes.all());
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
            c -> c.service().getSession(c.args().string("session_id"))),
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
            RestRoutes::downloadFile));
  }

  /**
   * {@code download_file}: a client that closes its connection meanwhile ends the fetch, so that
   * its slot and thread are free at once rather than when a slow origin is done.
   */
  private static Object downloadFile(Route.Call c) {
    return untilClientGone(
        c, () -> OperationCalls.call(Operations.DOWNLOAD_FILE, c.service(), c.args()));
  }

  /**
   * Does {@code work}, a wait or a fetch that has read its request's body, interrupting its thread
   * if the client closes the connection meanwhile ({@link DisconnectWatch}): nobody would read the
   * answer, and the thread and the caller's slot are wanted.
   */
  static Object untilClientGone(Route.Call c, java.util.function.Supplier<Object> work) {
    HttpServletRequest req = c.request();
    if (req.getContentLengthLong() <= 0 && req.getHeader("Transfer-Encoding") == null) {
      try {
        // A GET has no body, but Jetty calls it finished (and the watch may start) only once a
        // read has said so.
        req.getInputStream().read();
      } catch (IOException e) {
        // the client is gone already: the watch will say so
      }
    }
    try (DisconnectWatch watch = DisconnectWatch.start(req);
        ThreadInterrupter interrupter = new ThreadInterrupter()) {
      watch.onDisconnect(interrupter::interrupt);
      return work.get();
    }
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

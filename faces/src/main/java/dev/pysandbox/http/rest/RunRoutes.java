package dev.pysandbox.http.rest;

import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.ResultOutputLimit;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import dev.pysandbox.http.rest.Route.Input;
import dev.pysandbox.http.rest.Route.Output;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * The run routes of {@code /api/v1}: start a run (answered when it ends, at once, or as a stream of
 * its events), attach to its events, read, cancel, rerun, compare, delete and purge runs. A run
 * that answers when it ends is cancelled when its client disconnects first, unless {@code
 * async_mode} asked for one that goes on without its caller.
 */
final class RunRoutes {
  private RunRoutes() {}

  static List<Route> all(int resultOutputLimit) {
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
        RestRoutes.route(
            "list_runs",
            "GET",
            "/runs",
            Operations.LIST_RUNS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.LIST_RUNS, c.service(), c.args())),
        RestRoutes.route(
            "validate_code",
            "POST",
            "/validate",
            Operations.VALIDATE_CODE,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.VALIDATE_CODE, c.service(), c.args())),
        RestRoutes.route(
            "get_run",
            "GET",
            "/runs/{run_id}",
            Operations.GET_RUN,
            Input.QUERY,
            200,
            // A long poll whose client went away ends at once, freeing its slot.
            c ->
                RestRoutes.untilClientGone(
                    c, () -> OperationCalls.call(Operations.GET_RUN, c.service(), c.args()))),
        RestRoutes.route(
            "get_run_outputs",
            "GET",
            "/runs/{run_id}/outputs",
            Operations.GET_RUN_OUTPUTS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.GET_RUN_OUTPUTS, c.service(), c.args())),
        RestRoutes.route(
            "cancel_run",
            "POST",
            "/runs/{run_id}/cancel",
            Operations.CANCEL_RUN,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.CANCEL_RUN, c.service(), c.args())),
        RestRoutes.route(
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
        RestRoutes.route(
            "diff_runs",
            "GET",
            "/runs/{run_id}/diff",
            Operations.DIFF_RUNS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.DIFF_RUNS, c.service(), c.args())),
        RestRoutes.route(
            "delete_run",
            "DELETE",
            "/runs/{run_id}",
            Operations.DELETE_RUN,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.DELETE_RUN, c.service(), c.args())),
        RestRoutes.route(
            "purge_runs",
            "POST",
            "/runs/purge",
            Operations.PURGE_RUNS,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.PURGE_RUNS, c.service(), c.args())),
        RestRoutes.route(
            "list_security_events",
            "GET",
            "/security-events",
            Operations.LIST_SECURITY_EVENTS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.LIST_SECURITY_EVENTS, c.service(), c.args())),
        RestRoutes.route(
            "list_environments",
            "GET",
            "/environments",
            Operations.LIST_ENVIRONMENTS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.LIST_ENVIRONMENTS, c.service(), c.args())),
        RestRoutes.route(
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
  static long lastEventId(Route.Call c) {
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
}

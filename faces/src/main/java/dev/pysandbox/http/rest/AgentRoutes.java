package dev.pysandbox.http.rest;

import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import dev.pysandbox.http.rest.Route.Input;
import dev.pysandbox.http.rest.Route.Output;
import java.util.List;

/**
 * The agent-run routes of {@code /api/v1} (issue 26): start one, list, read (waiting for its end if
 * asked), cancel, and follow its events as NDJSON or server-sent events. An agent run goes on
 * without its caller: a client that goes away only stops waiting or watching. Over REST there is no
 * client model, so the server's {@code agent_provider} must be a model service (the core says so
 * when it is sampling).
 */
final class AgentRoutes {
  private AgentRoutes() {}

  static List<Route> all() {
    return List.of(
        RestRoutes.route(
            "agent_run",
            "POST",
            "/agent-runs",
            Operations.AGENT_RUN,
            Input.JSON_FIELDS,
            201,
            c -> {
              AgentRunInfo r = OperationCalls.call(Operations.AGENT_RUN, c.service(), c.args());
              c.response()
                  .setHeader(
                      "Location",
                      c.request().getContextPath()
                          + c.request().getServletPath()
                          + "/agent-runs/"
                          + r.agentRunId());
              return r;
            }),
        RestRoutes.route(
            "list_agent_runs",
            "GET",
            "/agent-runs",
            Operations.LIST_AGENT_RUNS,
            Input.QUERY,
            200,
            c -> OperationCalls.call(Operations.LIST_AGENT_RUNS, c.service(), c.args())),
        RestRoutes.route(
            "agent_status",
            "GET",
            "/agent-runs/{agent_run_id}",
            Operations.AGENT_STATUS,
            Input.QUERY,
            200,
            // A long poll whose client went away ends at once, freeing its slot.
            c ->
                RestRoutes.untilClientGone(
                    c, () -> OperationCalls.call(Operations.AGENT_STATUS, c.service(), c.args()))),
        RestRoutes.route(
            "agent_cancel",
            "POST",
            "/agent-runs/{agent_run_id}/cancel",
            Operations.AGENT_CANCEL,
            Input.JSON_FIELDS,
            200,
            c -> OperationCalls.call(Operations.AGENT_CANCEL, c.service(), c.args())),
        new Route(
            "get_agent_run_events",
            "GET",
            PathTemplate.of("/agent-runs/{agent_run_id}/events"),
            RestOperations.AGENT_RUN_EVENTS,
            Input.QUERY,
            Output.EVENTS,
            200,
            c -> {
              EventStream.Format wanted = EventStream.Format.wanted(c.request());
              EventStream.Format format = wanted == null ? EventStream.Format.NDJSON : wanted;
              String id = c.args().string("agent_run_id");
              long after = RunRoutes.lastEventId(c);
              if (c.request().getMethod().equals("HEAD")) {
                c.service().agents().status(id, 0);
                c.response().setStatus(200);
                c.response().setContentType(format.mediaType);
                return null;
              }
              EventStream.open(
                  c.request(),
                  c.response(),
                  format,
                  sink -> AgentEventSource.watch(c.service().agents(), id, after, sink),
                  null);
              return null;
            }));
  }
}

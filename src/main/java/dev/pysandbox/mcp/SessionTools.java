package dev.pysandbox.mcp;

import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionList;
import dev.pysandbox.api.op.Operations;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.List;
import java.util.Map;

/** The session group: create, list, close, and a session's globals. */
final class SessionTools {
  private SessionTools() {}

  static List<SyncToolSpecification> specs(ToolFactory f) {
    return List.of(
        f.tool(
            Operations.CREATE_SESSION,
            (service, a) -> {
              SessionInfo s =
                  service.createSession(
                      a.string("session_id"),
                      a.integer("ttl_minutes"),
                      new LimitRequest(
                          a.integer("memory_limit_mb"),
                          a.integer("pids_limit"),
                          a.number("cpu_limit"),
                          a.integer("disk_quota_mb")));
              return ToolResults.ok(s, "session " + s.sessionId() + " is " + s.state());
            }),
        f.tool(
            Operations.LIST_SESSIONS,
            (service, a) -> {
              List<SessionInfo> all = service.listSessions();
              StringBuilder text = new StringBuilder(all.size() + " sessions\n");
              all.forEach(
                  s ->
                      text.append(s.sessionId())
                          .append("  ")
                          .append(s.state())
                          .append("  runs ")
                          .append(s.runCount())
                          .append("  last used ")
                          .append(s.lastUsedAt())
                          .append('\n'));
              return ToolResults.ok(new SessionList(all), text.toString());
            }),
        f.tool(
            Operations.CLOSE_SESSION,
            (service, a) -> {
              SessionInfo s = service.closeSession(a.string("session_id"));
              return ToolResults.ok(s, "session " + s.sessionId() + " closed");
            }),
        f.tool(
            Operations.GET_CONTEXT,
            (service, a) -> {
              ContextSnapshot c = service.getContext(a.string("session_id"), a.strings("names"));
              return ToolResults.ok(c, Json.write(c.variables()));
            }),
        f.tool(
            Operations.SET_CONTEXT,
            (service, a) -> {
              Map<String, Object> values = a.object("values");
              ContextSnapshot c = service.setContext(a.string("session_id"), values);
              return ToolResults.ok(c, "set " + String.join(", ", c.variables().keySet()));
            }),
        f.tool(
            Operations.CLEAR_CONTEXT,
            (service, a) -> {
              SessionInfo s = service.clearContext(a.string("session_id"));
              return ToolResults.ok(s, "session " + s.sessionId() + ": globals cleared");
            }));
  }
}

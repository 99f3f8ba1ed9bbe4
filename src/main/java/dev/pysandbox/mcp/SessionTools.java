package dev.pysandbox.mcp;

import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.mcp.ToolFactory.Kind;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The session group: create, list, close, and a session's globals. */
final class SessionTools {
  /** What list_sessions returns. */
  record SessionList(List<SessionInfo> sessions) {}

  private SessionTools() {}

  static List<SyncToolSpecification> specs(ToolFactory f, SandboxService service) {
    return List.of(
        f.tool(
            "create_session",
            "Create a session",
            "Open a stateful Python session: variables and files in /mnt/data persist between"
                + " run_python calls that name it. Returns the session (an existing one with the"
                + " same id is returned as it is).",
            Schemas.CREATE_SESSION,
            SessionInfo.class,
            Kind.IDEMPOTENT_WRITE,
            Set.of(
                "session_id",
                "ttl_minutes",
                "memory_limit_mb",
                "pids_limit",
                "cpu_limit",
                "disk_quota_mb"),
            a -> {
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
            "list_sessions",
            "List sessions",
            "List open sessions with state, creation and last use, run count and workspace size.",
            Schemas.NO_ARGS,
            SessionList.class,
            Kind.READ,
            Set.of(),
            a -> {
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
            "close_session",
            "Close a session",
            "Kill a session's sandbox and delete its workspace.",
            Schemas.SESSION_ID_ONLY,
            SessionInfo.class,
            Kind.DESTRUCTIVE,
            Set.of("session_id"),
            a -> {
              SessionInfo s = service.closeSession(a.requiredString("session_id"));
              return ToolResults.ok(s, "session " + s.sessionId() + " closed");
            }),
        f.tool(
            "get_context",
            "Get session variables",
            "Return a session's global variables: JSON values as they are, others as type and"
                + " repr.",
            Schemas.GET_CONTEXT,
            ContextSnapshot.class,
            Kind.READ,
            Set.of("session_id", "names"),
            a -> {
              ContextSnapshot c =
                  service.getContext(a.requiredString("session_id"), a.strings("names"));
              return ToolResults.ok(c, Json.write(c.variables()));
            }),
        f.tool(
            "set_context",
            "Set session variables",
            "Set global variables of a session from a JSON object.",
            Schemas.SET_CONTEXT,
            ContextSnapshot.class,
            Kind.IDEMPOTENT_WRITE,
            Set.of("session_id", "values"),
            a -> {
              Map<String, Object> values = a.object("values");
              ContextSnapshot c = service.setContext(a.requiredString("session_id"), values);
              return ToolResults.ok(c, "set " + String.join(", ", c.variables().keySet()));
            }),
        f.tool(
            "clear_context",
            "Clear session variables",
            "Reset a session's globals (variables and imports are gone; files stay).",
            Schemas.SESSION_ID_ONLY,
            SessionInfo.class,
            Kind.DESTRUCTIVE,
            Set.of("session_id"),
            a -> {
              SessionInfo s = service.clearContext(a.requiredString("session_id"));
              return ToolResults.ok(s, "session " + s.sessionId() + ": globals cleared");
            }));
  }
}

package dev.pysandbox.mcp;

import dev.pysandbox.api.ContextSnapshot;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionList;
import dev.pysandbox.api.op.Operations;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.List;

/** The session group: create, list, close, and a session's globals. */
final class SessionTools {
  private SessionTools() {}

  static List<SyncToolSpecification> specs(ToolFactory f) {
    return List.of(
        f.tool(
            Operations.CREATE_SESSION,
            (SessionInfo s) ->
                ToolResults.ok(
                    s,
                    "session " + s.sessionId() + " is " + s.state() + " (tier " + s.tier() + ")")),
        f.tool(
            Operations.LIST_SESSIONS,
            (SessionList list) ->
                ToolResults.listing(
                    list,
                    list.sessions().size() + " sessions",
                    list.sessions(),
                    s ->
                        s.sessionId()
                            + "  "
                            + s.state()
                            + "  tier "
                            + s.tier()
                            + "  runs "
                            + s.runCount()
                            + "  last used "
                            + s.lastUsedAt())),
        f.tool(
            Operations.CLOSE_SESSION,
            (SessionInfo s) -> ToolResults.ok(s, "session " + s.sessionId() + " closed")),
        f.tool(
            Operations.GET_CONTEXT,
            (ContextSnapshot c) -> ToolResults.ok(c, Json.write(c.variables()))),
        f.tool(
            Operations.SET_CONTEXT,
            (ContextSnapshot c) ->
                ToolResults.ok(c, "set " + String.join(", ", c.variables().keySet()))),
        f.tool(
            Operations.CLEAR_CONTEXT,
            (SessionInfo s) ->
                ToolResults.ok(s, "session " + s.sessionId() + ": globals cleared")));
  }
}

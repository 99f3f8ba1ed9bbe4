package dev.pysandbox.mcp;

import dev.pysandbox.api.agent.AgentCancelResult;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunList;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.api.op.Operations;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.List;

/**
 * The agent group: agent_run, agent_status, agent_cancel, list_agent_runs. Over MCP an agent run
 * may ask the calling client's own model (sampling), lent by the call's {@link RunProgress}.
 */
final class AgentRunTools {
  private AgentRunTools() {}

  static List<SyncToolSpecification> specs(ToolFactory f) {
    return List.of(
        f.tool(Operations.AGENT_RUN, (AgentRunInfo a) -> ToolResults.ok(a, text(a))),
        f.tool(Operations.AGENT_STATUS, (AgentRunInfo a) -> ToolResults.ok(a, text(a))),
        f.tool(
            Operations.AGENT_CANCEL,
            (AgentCancelResult c) ->
                ToolResults.ok(c, c.agentRunId() + ": " + c.status() + " — " + c.message())),
        f.tool(
            Operations.LIST_AGENT_RUNS,
            (AgentRunList list) ->
                ToolResults.listing(
                    list,
                    list.agentRuns().size() + " agent runs",
                    list.agentRuns(),
                    a ->
                        a.agentRunId()
                            + "  "
                            + a.status().wireName()
                            + "  "
                            + a.createdAt()
                            + "  "
                            + firstLine(a.task()))));
  }

  /** What a person reads of an agent run: status, why, the answer, a line per step. */
  static String text(AgentRunInfo a) {
    StringBuilder b = new StringBuilder();
    b.append(a.agentRunId()).append(": ").append(a.status().wireName());
    if (a.stopReason() != null) {
      b.append(" — ").append(a.stopReason());
    }
    b.append('\n');
    for (AgentStep s : a.steps()) {
      b.append("  ").append(s.index()).append(' ').append(s.kind().wireName());
      if (s.runId() != null) {
        b.append(' ').append(s.runId()).append(' ').append(s.runStatus());
      }
      String shown = s.code() != null ? s.code() : s.text();
      if (shown != null && !shown.isBlank()) {
        b.append(": ").append(firstLine(shown));
      }
      b.append('\n');
    }
    if (a.answer() != null) {
      b.append("answer: ").append(a.answer()).append('\n');
    }
    return b.toString();
  }

  private static String firstLine(String text) {
    String line = text.strip().lines().findFirst().orElse("");
    return line.length() > 120 ? line.substring(0, 120) + "…" : line;
  }
}

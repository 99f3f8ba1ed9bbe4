package dev.pysandbox.notebook;

import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentStep;

/** The markdown of an agent run's notebook: its title cell and its steps' text. */
final class AgentView {
  private AgentView() {}

  static String title(AgentRunInfo a) {
    StringBuilder b = new StringBuilder();
    b.append("# Agent run ").append(a.agentRunId()).append("\n\n");
    b.append("**Task:** ").append(MarkdownText.escape(a.task())).append("\n\n");
    b.append("- status: ").append(a.status().wireName());
    if (a.stopReason() != null) {
      b.append(" (").append(MarkdownText.escape(a.stopReason())).append(')');
    }
    b.append('\n');
    b.append("- model: ")
        .append(a.provider())
        .append(a.model() == null || a.model().isEmpty() ? "" : " " + a.model())
        .append('\n');
    b.append("- session: ").append(a.sessionId()).append('\n');
    b.append("- tokens: ")
        .append(a.usage().totalTokens())
        .append(a.usage().tokensEstimated() ? " (estimated)" : "")
        .append(", iterations: ")
        .append(a.usage().iterations())
        .append('\n');
    if (a.answer() != null) {
      b.append("\n**Answer:**\n\n").append(a.answer()).append('\n');
    }
    return b.toString();
  }

  static String step(AgentStep s) {
    StringBuilder b = new StringBuilder();
    b.append("**Step ").append(s.index()).append(" — ").append(s.kind().wireName());
    if (s.tool() != null) {
      b.append(" (").append(MarkdownText.escape(s.tool())).append(')');
    }
    b.append("**\n\n");
    if (s.text() != null) {
      b.append(s.text()).append('\n');
    }
    if (s.code() != null) {
      b.append("\n```python\n").append(s.code()).append("\n```\n");
    }
    if (s.error() != null) {
      b.append("\n_").append(MarkdownText.escape(s.error())).append("_\n");
    }
    return b.toString();
  }
}

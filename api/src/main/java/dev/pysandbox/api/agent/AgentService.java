package dev.pysandbox.api.agent;

import java.util.function.Consumer;

/**
 * Agent runs of one tenant: {@link dev.pysandbox.api.SandboxService#agents()}. Another tenant's
 * agent run is {@code not_found}.
 */
public interface AgentService {
  /**
   * Starts an agent run and waits up to its wait_seconds for the end.
   *
   * @param clientModel the caller's own model (MCP sampling), or null: used when the server's
   *     agent_provider is sampling
   * @throws dev.pysandbox.api.PysandboxException invalid_argument (a budget out of range, no model
   *     to ask), not_found (its session), rate_limited (too many agent runs at once)
   */
  AgentRunInfo start(AgentRunRequest request, ModelClient clientModel);

  /** An agent run with its steps, after waiting up to {@code waitSeconds} for its end. */
  AgentRunInfo status(String agentRunId, int waitSeconds);

  /** Stops it: the model call or code run in flight is abandoned or cancelled. */
  AgentCancelResult cancel(String agentRunId);

  /**
   * A page of agent runs, newest first.
   *
   * @param status only these (null: all)
   * @param cursor a previous page's nextCursor, or null
   */
  AgentRunList list(int limit, String cursor, AgentRunStatus status);

  /**
   * Follows an agent run: {@code sink} gets each event after {@code afterSeq}, those already past
   * first, until the {@code done} event or until the returned handle is closed. Called on the agent
   * run's thread: {@code sink} must not block.
   */
  AutoCloseable watch(String agentRunId, long afterSeq, Consumer<AgentEvent> sink);
}

package dev.pysandbox.api.agent;

/**
 * What agent_cancel did.
 *
 * @param cancelled true when this call stopped it
 * @param status its status after the call
 * @param message what was stopped, or why nothing was
 */
public record AgentCancelResult(
    String agentRunId, boolean cancelled, AgentRunStatus status, String message) {}

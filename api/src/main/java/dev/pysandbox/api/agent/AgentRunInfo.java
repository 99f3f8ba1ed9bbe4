package dev.pysandbox.api.agent;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * An agent run, as agent_run, agent_status and list_agent_runs return it and the store keeps it.
 *
 * @param agentRunId {@code agr_} + 16 hex
 * @param tenant whose it is (never on the wire)
 * @param status where it is
 * @param task what the model was asked to do
 * @param provider where the model came from: sampling, openai, anthropic, ollama
 * @param model the model's name (as the provider reported it when it did)
 * @param sessionId the session its code runs in
 * @param ownSession whether that session was opened for it (it stays open after the run)
 * @param answer the model's final text, once it succeeded
 * @param stopReason why it ended, in words (or why it waits)
 * @param errorCode the error's code when it failed (provider_error, invalid_argument …)
 * @param retryable whether trying again may succeed, when it failed
 * @param approvalId the approval its code waits for, while awaiting_approval
 * @param steps what it did, in order (empty in listings)
 * @param usage what it spent
 * @param budgets its limits
 * @param budgetUse each limit, what was used of it and what is left
 * @param createdAt ISO-8601 instant it started
 * @param endedAt ISO-8601 instant it ended, or null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AgentRunInfo(
    String agentRunId,
    @JsonIgnore String tenant,
    AgentRunStatus status,
    String task,
    String provider,
    String model,
    String sessionId,
    boolean ownSession,
    String answer,
    String stopReason,
    String errorCode,
    Boolean retryable,
    String approvalId,
    List<AgentStep> steps,
    AgentUsage usage,
    @JsonIgnore AgentBudgets budgets,
    @com.fasterxml.jackson.annotation.JsonProperty("budgets") List<AgentBudgetUse> budgetUse,
    String createdAt,
    String endedAt) {

  public AgentRunInfo {
    steps = steps == null ? List.of() : List.copyOf(steps);
    budgetUse = budgetUse == null ? List.of() : List.copyOf(budgetUse);
    usage = usage == null ? AgentUsage.NONE : usage;
  }

  /** This agent run without its steps (as listings show it). */
  public AgentRunInfo withoutSteps() {
    return withSteps(List.of());
  }

  public AgentRunInfo withSteps(List<AgentStep> steps) {
    return new AgentRunInfo(
        agentRunId,
        tenant,
        status,
        task,
        provider,
        model,
        sessionId,
        ownSession,
        answer,
        stopReason,
        errorCode,
        retryable,
        approvalId,
        steps,
        usage,
        budgets,
        budgetUse,
        createdAt,
        endedAt);
  }

  /** This agent run in another state (the steps as they are). */
  public AgentRunInfo withState(
      AgentRunStatus status,
      String answer,
      String stopReason,
      String errorCode,
      Boolean retryable,
      String approvalId,
      AgentUsage usage,
      List<AgentBudgetUse> budgetUse,
      String endedAt) {
    return new AgentRunInfo(
        agentRunId,
        tenant,
        status,
        task,
        provider,
        model,
        sessionId,
        ownSession,
        answer,
        stopReason,
        errorCode,
        retryable,
        approvalId,
        steps,
        usage,
        budgets,
        budgetUse,
        createdAt,
        endedAt);
  }

  /** This agent run with the model's name as the provider reported it. */
  public AgentRunInfo withModel(String model) {
    return new AgentRunInfo(
        agentRunId,
        tenant,
        status,
        task,
        provider,
        model,
        sessionId,
        ownSession,
        answer,
        stopReason,
        errorCode,
        retryable,
        approvalId,
        steps,
        usage,
        budgets,
        budgetUse,
        createdAt,
        endedAt);
  }

  /** This agent run with another stop reason (what it waits for, while it waits). */
  public AgentRunInfo withStopReason(String stopReason) {
    return withState(
        status, answer, stopReason, errorCode, retryable, approvalId, usage, budgetUse, endedAt);
  }
}

package dev.pysandbox.api.agent;

/**
 * One budget of an agent run: its limit, what was used, what is left.
 *
 * @param name max_iterations, token_budget, time_budget_seconds, max_subcalls or max_depth
 */
public record AgentBudgetUse(String name, long limit, long used, long left) {
  public static AgentBudgetUse of(String name, long limit, long used) {
    return new AgentBudgetUse(name, limit, used, Math.max(0, limit - used));
  }
}

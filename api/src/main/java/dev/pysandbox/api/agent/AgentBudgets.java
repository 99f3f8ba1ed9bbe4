package dev.pysandbox.api.agent;

import dev.pysandbox.api.PysandboxException;
import java.util.List;

/**
 * The limits of one agent run. The server's settings give the defaults; a call may ask for others
 * up to {@link #MAXIMA}.
 *
 * @param maxIterations model replies at most (sub-calls not counted)
 * @param tokenBudget prompt plus completion tokens at most, sub-calls included
 * @param timeBudgetSeconds seconds from start to end at most, model calls and code runs included
 * @param maxSubcalls llm_query calls at most
 * @param maxDepth how deep llm_query may nest (1: the agent's code may call it, its answer may not
 *     call again)
 */
public record AgentBudgets(
    int maxIterations, long tokenBudget, int timeBudgetSeconds, int maxSubcalls, int maxDepth) {

  /** The defaults of a server whose settings name none. */
  public static final AgentBudgets DEFAULTS = new AgentBudgets(12, 8_000, 300, 12, 4);

  /** The most a call or a setting may ask for. */
  public static final AgentBudgets MAXIMA = new AgentBudgets(200, 2_000_000, 3_600, 500, 8);

  public AgentBudgets {
    check("max_iterations", maxIterations, MAXIMA == null ? maxIterations : MAXIMA.maxIterations);
    check("token_budget", tokenBudget, MAXIMA == null ? tokenBudget : MAXIMA.tokenBudget);
    check(
        "time_budget_seconds",
        timeBudgetSeconds,
        MAXIMA == null ? timeBudgetSeconds : MAXIMA.timeBudgetSeconds);
    check("max_subcalls", maxSubcalls, MAXIMA == null ? maxSubcalls : MAXIMA.maxSubcalls, 0);
    check("max_depth", maxDepth, MAXIMA == null ? maxDepth : MAXIMA.maxDepth);
  }

  /** These budgets with a call's overrides (each null for "the default"), each checked. */
  public AgentBudgets with(
      Integer maxIterations,
      Long tokenBudget,
      Integer timeBudgetSeconds,
      Integer maxSubcalls,
      Integer maxDepth) {
    return new AgentBudgets(
        maxIterations != null ? maxIterations : this.maxIterations,
        tokenBudget != null ? tokenBudget : this.tokenBudget,
        timeBudgetSeconds != null ? timeBudgetSeconds : this.timeBudgetSeconds,
        maxSubcalls != null ? maxSubcalls : this.maxSubcalls,
        maxDepth != null ? maxDepth : this.maxDepth);
  }

  /** Each budget with what {@code usage} spent of it. */
  public List<AgentBudgetUse> use(AgentUsage usage, int depthReached) {
    return List.of(
        AgentBudgetUse.of("max_iterations", maxIterations, usage.iterations()),
        AgentBudgetUse.of("token_budget", tokenBudget, usage.totalTokens()),
        AgentBudgetUse.of("time_budget_seconds", timeBudgetSeconds, (long) usage.seconds()),
        AgentBudgetUse.of("max_subcalls", maxSubcalls, usage.subcalls()),
        AgentBudgetUse.of("max_depth", maxDepth, depthReached));
  }

  private static void check(String name, long value, long max) {
    check(name, value, max, 1);
  }

  private static void check(String name, long value, long max, long min) {
    if (value < min || value > max) {
      throw PysandboxException.invalid(
          name + " " + value + " is out of range: use " + min + " to " + max);
    }
  }
}

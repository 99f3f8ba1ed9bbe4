package dev.pysandbox.api.agent;

import dev.pysandbox.api.PysandboxException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What agent_run asks for. Budgets left null take the server's defaults.
 *
 * @param task what the model is to do (1 to {@link #MAX_TASK_BYTES} bytes of UTF-8)
 * @param sessionId the session to work in, or null for one of its own
 * @param model the model to ask, or null for the server's agent_model
 * @param tier the tier of its own session (with no session_id)
 * @param packages the packages of its own session (with no session_id)
 * @param waitSeconds seconds to wait for its end before answering (0 to 60)
 */
public record AgentRunRequest(
    String task,
    String sessionId,
    String model,
    Integer maxIterations,
    Integer maxDepth,
    Integer maxSubcalls,
    Long tokenBudget,
    Integer timeBudgetSeconds,
    String tier,
    List<String> packages,
    int waitSeconds) {
  public static final int MAX_TASK_BYTES = 64 * 1024;
  public static final int MAX_MODEL_NAME = 200;

  public AgentRunRequest {
    if (task == null || task.isBlank()) {
      throw PysandboxException.invalid("task is required: say what the agent is to do");
    }
    if (task.getBytes(StandardCharsets.UTF_8).length > MAX_TASK_BYTES) {
      throw PysandboxException.invalid(
          "task is too long: at most " + MAX_TASK_BYTES + " bytes of UTF-8");
    }
    if (sessionId != null) {
      dev.pysandbox.api.Ids.requireSessionId(sessionId);
    }
    if (model != null
        && (model.isBlank()
            || model.length() > MAX_MODEL_NAME
            || !model.matches("[A-Za-z0-9._:/@+-]+"))) {
      throw PysandboxException.invalid(
          "model "
              + PysandboxException.quote(model)
              + " is invalid: use up to "
              + MAX_MODEL_NAME
              + " letters, digits and . _ : / @ + -");
    }
    if (waitSeconds < 0 || waitSeconds > dev.pysandbox.api.SandboxService.MAX_WAIT_SECONDS) {
      throw PysandboxException.invalid(
          "wait_seconds "
              + waitSeconds
              + " is out of range: use 0 to "
              + dev.pysandbox.api.SandboxService.MAX_WAIT_SECONDS);
    }
    if (sessionId != null && (tier != null || (packages != null && !packages.isEmpty()))) {
      throw PysandboxException.invalid(
          "tier and packages are for the agent's own session: with session_id the agent works"
              + " in that session as it is");
    }
    packages = packages == null ? List.of() : List.copyOf(packages);
  }

  /** A request with the task alone. */
  public static AgentRunRequest of(String task) {
    return new AgentRunRequest(task, null, null, null, null, null, null, null, null, List.of(), 0);
  }

  /** {@code defaults} with this request's overrides. */
  public AgentBudgets budgets(AgentBudgets defaults) {
    return defaults.with(maxIterations, tokenBudget, timeBudgetSeconds, maxSubcalls, maxDepth);
  }
}

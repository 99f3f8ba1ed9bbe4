package dev.pysandbox.api.agent;

import dev.pysandbox.api.WireEnum;

/** Where an agent run is. The last five are final: nothing changes an agent run once there. */
public enum AgentRunStatus implements WireEnum {
  /** The model is being asked, or its code runs. */
  RUNNING,
  /** Its code waits for a person's approval (the status carries the approval's id). */
  AWAITING_APPROVAL,
  /** The model gave its final answer. */
  SUCCEEDED,
  /** The provider failed past its retries, or the model kept breaking the rules. */
  FAILED,
  /** Cancelled by a caller (agent_cancel, CLI, a closed session). */
  CANCELLED,
  /** A budget (iterations, tokens, time, sub-calls) ran out; what was done is kept. */
  BUDGET_EXHAUSTED,
  /** The server stopped while it ran; what was done is kept. */
  INTERRUPTED;

  /** Whether nothing changes it any more. */
  public boolean finished() {
    return this != RUNNING && this != AWAITING_APPROVAL;
  }
}

package dev.pysandbox.api.agent;

import java.util.List;

/**
 * A page of agent runs, newest first, without their steps.
 *
 * @param nextCursor pass as cursor for the next page; null on the last
 */
public record AgentRunList(List<AgentRunInfo> agentRuns, String nextCursor) {
  public AgentRunList {
    agentRuns = List.copyOf(agentRuns);
  }
}

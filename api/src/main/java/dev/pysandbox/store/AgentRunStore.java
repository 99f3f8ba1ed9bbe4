package dev.pysandbox.store;

import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunList;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentStep;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Where agent runs and their steps are kept ({@link RunStore#agentRuns()}). Every read names the
 * tenant: another tenant's agent run is absent.
 */
public interface AgentRunStore {
  /** Records a new agent run (its steps, if any, too) as started by server {@code instanceId}. */
  void insert(AgentRunInfo run, String instanceId);

  /**
   * Adds a step (or replaces the step with its index, as a code step is written when its run starts
   * and again when it ends).
   *
   * @return false when the agent run is unknown or already finished (the step is not kept)
   */
  boolean putStep(String agentRunId, AgentStep step);

  /**
   * Writes an agent run's state (status, answer, stop reason, usage …; not its steps).
   *
   * @return false when it is unknown or already finished: a finished agent run never changes
   */
  boolean update(AgentRunInfo run);

  /** An agent run with its steps, or empty when unknown or another tenant's. */
  Optional<AgentRunInfo> get(String tenant, String agentRunId);

  /**
   * A page of a tenant's agent runs, newest first, without their steps.
   *
   * @param cursor a previous page's nextCursor (opaque), or null
   * @param status only these, or null
   */
  AgentRunList list(String tenant, int limit, String cursor, AgentRunStatus status);

  /**
   * Marks every unfinished agent run of server {@code instanceId} interrupted (its clean stop).
   *
   * @return their ids
   */
  List<String> interruptAll(String instanceId, String reason);

  /**
   * Marks interrupted every unfinished agent run whose server is no longer alive (a server that
   * died).
   *
   * @return their ids
   */
  List<String> interruptOrphans(Predicate<String> instanceAlive, String reason);
}

package dev.pysandbox.api.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One event of an agent run's stream ({@code GET /api/v1/agent-runs/{id}/events}, the CLI's
 * progress): {@code step} (a step began or ended, with it), {@code run} (a code run started, with
 * its run_id), {@code answer} (the final text), {@code done} (the agent run as it ended).
 *
 * @param seq 1, 2, 3 … per agent run
 * @param type step, run, answer or done
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AgentEvent(
    long seq, String type, AgentStep step, String runId, String answer, AgentRunInfo run) {}

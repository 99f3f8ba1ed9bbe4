package dev.pysandbox.api.agent;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One step of an agent run, as agent_status returns it and the store keeps it.
 *
 * @param index 0, 1, 2 … in the order they happened
 * @param kind what happened
 * @param text the model's text (model, subcall), or the observation the model was given (code,
 *     tool)
 * @param code the code a code step ran
 * @param runId the run of a code step
 * @param runStatus that run's status (succeeded, failed, timeout, denied …)
 * @param output a short view of the run's output (head and tail)
 * @param tool the tool a tool step called, or the tool call a model step made
 * @param prompt what was sent to the model in a model or subcall step, when {@code
 *     agent_record_content} is on
 * @param tokensIn prompt tokens of a model or subcall step
 * @param tokensOut completion tokens of a model or subcall step
 * @param tokensEstimated whether those were estimated (the provider gave none)
 * @param durationMs how long it took
 * @param startedAt ISO-8601 instant it began
 * @param error what went wrong in it, in words (a refused tool call, a provider fault)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AgentStep(
    int index,
    AgentStepKind kind,
    String text,
    String code,
    String runId,
    String runStatus,
    String output,
    String tool,
    String prompt,
    Integer tokensIn,
    Integer tokensOut,
    Boolean tokensEstimated,
    long durationMs,
    String startedAt,
    String error) {}

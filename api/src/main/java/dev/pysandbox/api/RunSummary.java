package dev.pysandbox.api;

/**
 * One line of run history: enough to choose a run, without its outputs.
 *
 * @param tenant its owner, written only in an operator's listing of every tenant's runs
 */
public record RunSummary(
    String runId,
    String sessionId,
    RunStatus status,
    String description,
    String codePreview,
    String codeHash,
    String createdAt,
    Long durationMs,
    Integer exitCode,
    String errorName,
    @com.fasterxml.jackson.annotation.JsonInclude(
            com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        String tenant) {}

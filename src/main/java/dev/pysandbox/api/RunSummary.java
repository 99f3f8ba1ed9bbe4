package dev.pysandbox.api;

/** One line of run history: enough to choose a run, without its outputs. */
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
    String errorName) {}

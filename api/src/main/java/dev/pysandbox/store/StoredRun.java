package dev.pysandbox.store;

import dev.pysandbox.api.RunStatus;

/**
 * What deleting a run concerns: its identity, state, where its files are and how big its record is.
 *
 * @param createdAt ISO-8601 instant
 * @param filesDir host directory of the run's files ({@code runs/<id>/files}), or null
 * @param recordBytes the text the record holds (code, output, JSON values), in characters
 */
public record StoredRun(
    String runId,
    String tenant,
    String sessionId,
    RunStatus status,
    String createdAt,
    String filesDir,
    long recordBytes) {}

package dev.pysandbox.api;

/**
 * What {@code delete_run} did.
 *
 * @param runId the run deleted
 * @param deleted true: its record is gone, and a tombstone keeps its place in the hash chain
 * @param filesDeleted true when its directory (kept files, notebooks) was removed too
 * @param filesBytes bytes of files removed (0 when they were kept on disk)
 * @param recordBytes characters of text the record held (code, output, JSON values)
 */
public record DeleteResult(
    String runId, boolean deleted, boolean filesDeleted, long filesBytes, long recordBytes) {}

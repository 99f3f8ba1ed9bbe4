package dev.pysandbox.api;

/**
 * A workspace file a run created, changed or deleted, as measured by the server.
 *
 * @param path path relative to {@code /mnt/data}
 * @param sizeBytes size after the run (0 when deleted)
 * @param sha256 hex digest of the content after the run ({@code null} when deleted)
 * @param mediaType guessed from the file name
 * @param change {@code created}, {@code modified} or {@code deleted}
 */
public record Artifact(
    String path, long sizeBytes, String sha256, String mediaType, String change) {}

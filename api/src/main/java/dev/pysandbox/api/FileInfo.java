package dev.pysandbox.api;

/**
 * A file in a workspace or kept with a run.
 *
 * @param path relative to {@code /mnt/data}
 * @param sizeBytes its size
 * @param sha256 hex digest of its content
 * @param mediaType guessed from its name
 */
public record FileInfo(String path, long sizeBytes, String sha256, String mediaType) {}

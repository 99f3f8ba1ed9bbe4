package dev.pysandbox.api;

/**
 * A file written into a session's workspace.
 *
 * @param path relative to {@code /mnt/data}
 * @param replaced true when it replaced an existing file
 */
public record UploadResult(
    String sessionId,
    String path,
    long sizeBytes,
    String sha256,
    String mediaType,
    boolean replaced) {}

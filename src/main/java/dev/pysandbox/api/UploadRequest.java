package dev.pysandbox.api;

/**
 * A file to put in a session's workspace: exactly one of {@code content} (text, stored as UTF-8)
 * and {@code contentBase64}.
 *
 * @param filename letters, digits, '.', '_' and '-', 1-255 characters, no ".."
 * @param overwrite false refuses to replace an existing file with {@code file_exists}
 */
public record UploadRequest(
    String sessionId, String filename, String content, String contentBase64, boolean overwrite) {}

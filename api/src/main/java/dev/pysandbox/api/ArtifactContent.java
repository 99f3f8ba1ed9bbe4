package dev.pysandbox.api;

/**
 * One file's content: UTF-8 text in {@code content}, anything else in {@code content_base64}.
 *
 * @param path relative to {@code /mnt/data}
 * @param mediaType guessed from its name
 * @param sizeBytes its size
 * @param sha256 hex digest of the bytes returned
 * @param content the text, or {@code null} for binary content
 * @param contentBase64 the bytes in base64, or {@code null} for text
 */
public record ArtifactContent(
    String path,
    String mediaType,
    long sizeBytes,
    String sha256,
    String content,
    String contentBase64) {}

package dev.pysandbox.api;

/**
 * The answer of {@code download_file}.
 *
 * @param sessionId the session it was saved in
 * @param path its path in the session's {@code /mnt/data} (as {@code upload_file} answers)
 * @param url the URL asked for
 * @param finalUrl the URL the file came from after redirects
 * @param sizeBytes its size
 * @param sha256 its sha256
 * @param contentType the content type the server sent, or {@code null}
 * @param status the HTTP status of the last answer
 */
public record DownloadResult(
    String sessionId,
    String path,
    String url,
    String finalUrl,
    long sizeBytes,
    String sha256,
    String contentType,
    int status) {}

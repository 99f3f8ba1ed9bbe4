package dev.pysandbox.api;

import com.fasterxml.jackson.annotation.JsonIgnore;

/**
 * A session's runs as one notebook ({@code export_session}).
 *
 * @param sessionId the session
 * @param format {@code ipynb} or {@code marimo}
 * @param runCount runs in the notebook, in the order they ran
 * @param failedCount of which did not succeed (marked in the notebook)
 * @param fileName the file's name under the data directory's {@code exports/}
 * @param path the file's host path; never on the wire (the CLI shows it)
 * @param sizeBytes the file's size
 * @param content the notebook's text when at most {@value #MAX_CONTENT_BYTES} bytes, else null
 * @param viewCommand how a person opens it
 */
public record SessionExport(
    String sessionId,
    String format,
    int runCount,
    int failedCount,
    String fileName,
    @JsonIgnore String path,
    long sizeBytes,
    String content,
    String viewCommand) {
  public static final long MAX_CONTENT_BYTES = 5_000_000;
  public static final int MAX_RUNS = 10_000;
}

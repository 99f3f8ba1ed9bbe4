package dev.pysandbox.api;

import java.util.Map;

/**
 * Something that changed a session's state besides a run, recorded so that its exported notebook
 * re-runs: globals set or cleared, a file put into its workspace.
 *
 * @param kind {@link #SET_CONTEXT}, {@link #CLEAR_CONTEXT}, {@link #UPLOAD_FILE} or {@link
 *     #DOWNLOAD_FILE}
 * @param at ISO-8601 instant
 * @param afterRunId the session's last run begun before it, or {@code null} when none was: where it
 *     stands among the runs
 * @param detail for set_context {@code values} (the JSON object set); for a file {@code path},
 *     {@code size_bytes}, {@code sha256} (and for a download {@code url}); empty for clear_context
 */
public record SessionStep(String kind, String at, String afterRunId, Map<String, Object> detail) {
  public static final String SET_CONTEXT = "set_context";
  public static final String CLEAR_CONTEXT = "clear_context";
  public static final String UPLOAD_FILE = "upload_file";
  public static final String DOWNLOAD_FILE = "download_file";

  public SessionStep {
    detail = detail == null ? Map.of() : java.util.Collections.unmodifiableMap(detail);
  }
}

package dev.pysandbox.api;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * What a run's answer to the call that ran it carries of its output ({@code result_output_limit}):
 * the head and tail of stdout and of stderr, flagged, while the record keeps what it kept. Every
 * face that answers a run with its record (MCP's run_python, REST's POST /runs) applies it, so that
 * they agree.
 */
public final class ResultOutputLimit {
  private ResultOutputLimit() {}

  /**
   * Caps {@code stdout} and {@code stderr} of a run's JSON (as {@link Json#toMap} wrote it) to
   * {@code limit} UTF-8 bytes each, adding {@code <stream>_truncated} and {@code
   * <stream>_omitted_bytes} to a stream it cut.
   *
   * @param limit bytes per stream; 0 leaves the JSON as it is
   */
  public static void apply(Map<String, Object> json, int limit) {
    if (limit > 0) {
      cap(json, "stdout", limit);
      cap(json, "stderr", limit);
    }
  }

  /** Keeps the head and tail of one output stream within {@code limit} UTF-8 bytes. */
  private static void cap(Map<String, Object> json, String stream, int limit) {
    if (!(json.get(stream) instanceof String text)) {
      return;
    }
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    if (bytes.length <= limit) {
      return;
    }
    int half = limit / 2;
    String head = utf8Prefix(bytes, half);
    String tail = utf8Suffix(bytes, half);
    long omitted =
        bytes.length
            - head.getBytes(StandardCharsets.UTF_8).length
            - tail.getBytes(StandardCharsets.UTF_8).length;
    json.put(
        stream,
        head
            + "\n[... pysandbox: "
            + omitted
            + " bytes not shown here (result_output_limit); get_run returns the recorded "
            + stream
            + " ...]\n"
            + tail);
    json.put(stream + "_truncated", true);
    json.put(stream + "_omitted_bytes", omitted);
  }

  private static String utf8Prefix(byte[] b, int n) {
    int end = n;
    while (end > 0 && (b[end] & 0xC0) == 0x80) {
      end--;
    }
    return new String(b, 0, end, StandardCharsets.UTF_8);
  }

  private static String utf8Suffix(byte[] b, int n) {
    int start = b.length - n;
    while (start < b.length && (b[start] & 0xC0) == 0x80) {
      start++;
    }
    return new String(b, start, b.length - start, StandardCharsets.UTF_8);
  }
}

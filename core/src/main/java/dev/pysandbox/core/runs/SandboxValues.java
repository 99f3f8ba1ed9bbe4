package dev.pysandbox.core.runs;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.Limits;
import java.io.IOException;
import java.io.OutputStream;

/**
 * The server's own check of the {@code __outputs__} a run's answer carries: the runner refuses
 * values nested too deep or too large before it serialises them, but it runs in the sandbox, so the
 * code can change what it sends. Depth is bounded where the answer is read ({@link
 * dev.pysandbox.worker.WorkerConnection#MAX_VALUE_DEPTH}); here, the runner's own refusal and the
 * size ({@code outputs_max_mb}), counted without keeping the text.
 */
final class SandboxValues {
  /** The most characters of a refusal the runner wrote that the record takes. */
  private static final int MAX_REASON_CHARS = 1000;

  private SandboxValues() {}

  /**
   * Why the run's {@code __outputs__} are not kept, or {@code null} when they are.
   *
   * @param outputs the answer's {@code outputs} object
   * @param maxBytes {@code outputs_max_mb}
   */
  static String rejectedOutputs(JsonNode outputs, long maxBytes) {
    JsonNode said = outputs.path("rejected");
    if (said.isTextual()) {
      String why = said.asText();
      return why.length() > MAX_REASON_CHARS ? why.substring(0, MAX_REASON_CHARS) + "…" : why;
    }
    JsonNode values = outputs.path("values");
    if (values.isMissingNode()) {
      return null;
    }
    long size = jsonBytes(values, maxBytes);
    if (size > maxBytes) {
      return tooLarge(size, maxBytes);
    }
    return null;
  }

  /** The refusal of {@code __outputs__} over the size limit, in the runner's words too. */
  static String tooLarge(long size, long maxBytes) {
    return "__outputs__ holds over "
        + size
        + " bytes as JSON, more than the "
        + maxBytes / Limits.MIB
        + " MiB a run may return there (outputs_max_mb); nothing of it was kept: return less,"
        + " or write it to a file in /mnt/data";
  }

  /** The size of {@code node} as JSON, counted up to just past {@code stopAbove}. */
  private static long jsonBytes(JsonNode node, long stopAbove) {
    long[] n = {0};
    OutputStream counter =
        new OutputStream() {
          @Override
          public void write(int b) throws IOException {
            count(1);
          }

          @Override
          public void write(byte[] b, int off, int len) throws IOException {
            count(len);
          }

          private void count(long k) throws IOException {
            n[0] += k;
            if (n[0] > stopAbove) {
              throw new IOException("over");
            }
          }
        };
    try {
      Json.mapper().writeValue(counter, node);
    } catch (IOException e) {
      // stopped once past the limit: n says how far it got
    }
    return n[0];
  }
}

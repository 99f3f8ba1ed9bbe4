package dev.pysandbox.core.agents;

import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.RunRecord;
import java.util.Map;

/** What the model is told of a code run: bounded, head and tail. */
final class Observations {
  private Observations() {}

  /** {@code text} at most {@code max} characters: its head and tail with a note between. */
  static String bound(String text, int max) {
    if (text == null) {
      return "";
    }
    if (text.length() <= max) {
      return text;
    }
    int head = max * 2 / 3;
    int tail = max - head;
    return text.substring(0, head)
        + "\n[... "
        + (text.length() - head - tail)
        + " characters left out ...]\n"
        + text.substring(text.length() - tail);
  }

  /** A code run as the model reads it: status, stdout, stderr, the error, the last value. */
  static String ofRun(RunRecord run, int max) {
    StringBuilder b = new StringBuilder();
    b.append("run ").append(run.runId()).append(": ").append(run.status());
    if (run.killReason() != null) {
      b.append(" (").append(run.killReason()).append(')');
    }
    b.append('\n');
    if (run.stdout() != null && !run.stdout().isEmpty()) {
      b.append("stdout:\n").append(run.stdout());
      if (!run.stdout().endsWith("\n")) {
        b.append('\n');
      }
    }
    if (run.stderr() != null && !run.stderr().isEmpty()) {
      b.append("stderr:\n").append(run.stderr());
      if (!run.stderr().endsWith("\n")) {
        b.append('\n');
      }
    }
    ErrorInfo error = run.error();
    if (error != null) {
      if (error.traceback() != null && !error.traceback().isEmpty()) {
        b.append("error:\n").append(error.traceback()).append('\n');
      } else {
        b.append("error: ").append(error.name()).append(": ").append(error.value()).append('\n');
      }
    }
    Map<String, Object> result = run.result();
    if (result != null && !result.isEmpty()) {
      Object text = result.get("text/plain");
      b.append("result: ").append(text != null ? text : result).append('\n');
    }
    if (run.message() != null && !run.status().name().equals("SUCCEEDED")) {
      b.append(run.message()).append('\n');
    }
    return bound(b.toString(), max);
  }

  /** A one-line view for a step's output field. */
  static String shortView(RunRecord run) {
    String out = run.stdout() == null ? "" : run.stdout();
    if (run.error() != null) {
      out = out + run.error().name() + ": " + run.error().value();
    }
    return bound(out, 400);
  }
}

package dev.pysandbox.core.runs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.worker.CapturedText;
import dev.pysandbox.worker.WorkerReply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The runner's answer to an execution, written onto the run's record: output, result, displays,
 * {@code __outputs__} (refused past {@code outputs_max_mb}), the status it reports and the imports
 * its policy refused. What the code reports is read here; what the server saw for itself (a limit,
 * a lost sandbox) has the last word over it.
 */
final class ExecReplies {
  private static final ObjectMapper JSON = Json.mapper();

  private ExecReplies() {}

  static void finished(WorkerReply r, long outputsMaxBytes, RunRecord.Builder run) {
    ObjectNode f = r.frame();
    output(r, run);
    run.durationMs(TimeUnit.NANOSECONDS.toMillis(r.elapsedNanos()));
    if (f.hasNonNull("result")) {
      run.result(map(f.get("result")));
    }
    List<Map<String, Object>> displays = new ArrayList<>();
    for (ObjectNode d : r.displays()) {
      displays.add(map(d));
    }
    for (JsonNode fig : f.path("figures")) {
      displays.add(map(fig));
    }
    run.displays(displays);
    JsonNode outputs = f.path("outputs");
    String rejected = SandboxValues.rejectedOutputs(outputs, outputsMaxBytes);
    List<String> nonJson = new ArrayList<>();
    if (rejected == null) {
      run.outputs(outputs.has("values") ? map(outputs.get("values")) : Map.of());
      outputs.path("non_json").forEach(n -> nonJson.add(n.asText()));
    } else {
      run.outputs(Map.of());
    }
    run.outputsNonJson(nonJson);
    if ("ok".equals(f.path("status").asText()) && rejected == null) {
      run.status(RunStatus.SUCCEEDED).exitCode(f.path("exit_code").asInt(0));
      return;
    }
    if (rejected != null && "ok".equals(f.path("status").asText())) {
      run.status(RunStatus.FAILED)
          .exitCode(f.path("exit_code").asInt(0))
          .error(new ErrorInfo("OutputsRejected", rejected, null))
          .message("OutputsRejected: " + rejected);
      return;
    }
    JsonNode err = f.path("error");
    ErrorInfo error =
        new ErrorInfo(
            err.path("name").asText("Error"),
            err.path("value").asText(""),
            err.path("traceback").asText(null));
    run.status(RunStatus.FAILED)
        .exitCode(f.path("exit_code").asInt(1))
        .error(error)
        .message(
            error.name()
                + (error.value().isEmpty() ? "" : ": " + error.value())
                + (rejected == null ? "" : "; and OutputsRejected: " + rejected));
  }

  /** A module name as the runner reports one; anything else in the list is not taken. */
  private static final java.util.regex.Pattern MODULE =
      java.util.regex.Pattern.compile(
          "[A-Za-z_][A-Za-z0-9_]{0,99}(\\.[A-Za-z_][A-Za-z0-9_]{0,99}){0,9}");

  /** At most this many denied imports are taken from one answer. */
  static final int MAX_DENIED_IMPORTS = 20;

  /**
   * The imports the runner's import policy refused during the execution ({@code denied_imports} in
   * its answer): module names only, each once, at most {@value #MAX_DENIED_IMPORTS}. The code can
   * forge or hide these (its process writes the answer), so they are a report, never a verdict.
   */
  static List<String> deniedImports(ObjectNode frame) {
    List<String> out = new ArrayList<>();
    for (JsonNode n : frame.path("denied_imports")) {
      String m = n.asText("");
      if (n.isTextual() && MODULE.matcher(m).matches() && !out.contains(m)) {
        out.add(m);
        if (out.size() == MAX_DENIED_IMPORTS) {
          break;
        }
      }
    }
    return out;
  }

  static void output(WorkerReply r, RunRecord.Builder run) {
    CapturedText out = r.stdout();
    CapturedText err = r.stderr();
    run.stdout(out.text())
        .stdoutTruncated(out.truncated())
        .stdoutBytes(out.totalBytes())
        .stderr(err.text())
        .stderrTruncated(err.truncated())
        .stderrBytes(err.totalBytes());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(JsonNode node) {
    return JSON.convertValue(node, Map.class);
  }
}

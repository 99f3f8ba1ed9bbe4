package dev.pysandbox.notebook;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SessionStep;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentStep;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Runs as an nbformat 4.5 notebook: per run a markdown cell (description, status) and a code cell
 * whose outputs are what the run printed, displayed, returned and raised. Names are nbformat's, so
 * a plain mapper; written as Jupyter writes (one-space indent, {@code "key": value}).
 */
final class IpynbWriter {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final ObjectWriter PRETTY =
      JSON.writer(
              new DefaultPrettyPrinter(
                      Separators.createDefaultInstance()
                          .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                          .withObjectEmptySeparator("")
                          .withArrayEmptySeparator(""))
                  .withObjectIndenter(new DefaultIndenter(" ", "\n"))
                  .withArrayIndenter(new DefaultIndenter(" ", "\n")))
          .with(new SurrogateEscapes());

  /** A MIME type; other keys of a bundle the sandbox sent are left out. */
  private static final Pattern MIME =
      Pattern.compile("[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9!#$&^_.+-]+");

  /** MIME types whose value is JSON; every other type's value must be a string. */
  private static final Pattern JSON_MIME = Pattern.compile("application/(.*\\+)?json");

  private static final Pattern NOT_ID_CHAR = Pattern.compile("[^A-Za-z0-9_-]");

  private IpynbWriter() {}

  static String one(RunRecord run) {
    ObjectNode nb = notebook(List.of(run));
    ((ObjectNode) nb.get("metadata")).set("pysandbox", JSON.valueToTree(RunView.metadata(run)));
    ArrayNode cells = nb.putArray("cells");
    addRun(cells, run, 1);
    return write(nb);
  }

  static String session(List<RunRecord> runs, List<SessionStep> steps, String title) {
    ObjectNode nb = notebook(runs);
    String sessionId =
        runs.stream().map(RunRecord::sessionId).filter(Objects::nonNull).findFirst().orElse(null);
    String heading = RunView.blank(title) ? Notebooks.defaultTitle(sessionId) : title;
    Map<String, Object> meta = new LinkedHashMap<>();
    if (sessionId != null) {
      meta.put("session_id", sessionId);
    }
    meta.put("run_ids", runs.stream().map(RunRecord::runId).toList());
    ObjectNode nbMeta = (ObjectNode) nb.get("metadata");
    nbMeta.put("title", heading);
    nbMeta.set("pysandbox", JSON.valueToTree(meta));
    ArrayNode cells = nb.putArray("cells");
    ObjectNode titleCell = cells.addObject();
    titleCell.put("cell_type", "markdown").put("id", "title").putObject("metadata");
    titleCell.set("source", lines(Notebooks.titleMarkdown(heading, sessionId, runs)));
    int run = 0;
    int step = 0;
    for (SessionTimeline.Entry e : SessionTimeline.of(runs, steps)) {
      if (e.run() != null) {
        addRun(cells, e.run(), ++run);
      } else {
        addStep(cells, e.step(), ++step);
      }
    }
    return write(nb);
  }

  /**
   * An agent run: a title cell (task, model, status, answer), then per step a markdown cell with
   * the model's text, or the code run's cells with its real outputs (a run not found: the code
   * alone, with no outputs).
   */
  static String agent(AgentRunInfo agent, Map<String, RunRecord> runs) {
    List<RunRecord> ran =
        agent.steps().stream()
            .map(AgentStep::runId)
            .filter(Objects::nonNull)
            .map(runs::get)
            .filter(Objects::nonNull)
            .toList();
    ObjectNode nb = notebook(ran);
    ObjectNode nbMeta = (ObjectNode) nb.get("metadata");
    nbMeta.put("title", "pysandbox agent run " + agent.agentRunId());
    Map<String, Object> meta = new LinkedHashMap<>();
    meta.put("agent_run_id", agent.agentRunId());
    meta.put("session_id", agent.sessionId());
    meta.put("status", agent.status().wireName());
    meta.put("run_ids", ran.stream().map(RunRecord::runId).toList());
    nbMeta.set("pysandbox", JSON.valueToTree(meta));
    ArrayNode cells = nb.putArray("cells");
    ObjectNode title = cells.addObject();
    title.put("cell_type", "markdown").put("id", "title").putObject("metadata");
    title.set("source", lines(AgentView.title(agent)));
    int n = 0;
    for (AgentStep step : agent.steps()) {
      RunRecord run = step.runId() == null ? null : runs.get(step.runId());
      if (run != null && run.code() != null) {
        addRun(cells, run, ++n);
      } else if (step.text() != null && !step.text().isBlank() || step.code() != null) {
        ObjectNode md = cells.addObject();
        md.put("cell_type", "markdown").put("id", "agent-step-" + step.index());
        md.putObject("metadata").putObject("pysandbox").put("agent_step", step.index());
        md.set("source", lines(AgentView.step(step)));
      }
    }
    return write(nb);
  }

  /** A step: its markdown line, and a code cell that does it again (or checks its file). */
  private static void addStep(ArrayNode cells, SessionStep step, int n) {
    ObjectNode md = cells.addObject();
    md.put("cell_type", "markdown").put("id", "step-" + n + "-md");
    md.putObject("metadata").putObject("pysandbox").put("step", step.kind());
    md.set("source", lines(StepView.markdown(step)));
    ObjectNode code = cells.addObject();
    code.put("cell_type", "code").putNull("execution_count");
    code.put("id", "step-" + n + "-code");
    code.putObject("metadata").set("pysandbox", JSON.valueToTree(StepView.metadata(step)));
    code.putArray("outputs");
    code.set("source", lines(StepView.code(step)));
  }

  private static ObjectNode notebook(List<RunRecord> runs) {
    ObjectNode nb = JSON.createObjectNode();
    nb.put("nbformat", 4).put("nbformat_minor", 5);
    ObjectNode meta = nb.putObject("metadata");
    meta.putObject("kernelspec")
        .put("name", "python3")
        .put("display_name", "Python 3")
        .put("language", "python");
    ObjectNode language = meta.putObject("language_info").put("name", "python");
    runs.stream()
        .map(RunRecord::interpreter)
        .filter(Objects::nonNull)
        .findFirst()
        .ifPresent(v -> language.put("version", v));
    language.put("file_extension", ".py").put("mimetype", "text/x-python");
    return nb;
  }

  private static void addRun(ArrayNode cells, RunRecord run, int n) {
    String id = cellId(run.runId(), n);
    ObjectNode md = cells.addObject();
    md.put("cell_type", "markdown").put("id", id + "-md");
    md.putObject("metadata").putObject("pysandbox").put("run_id", run.runId());
    md.set("source", lines(RunView.markdown(run)));

    ObjectNode code = cells.addObject();
    code.put("cell_type", "code").put("execution_count", n).put("id", id + "-code");
    code.putObject("metadata").set("pysandbox", JSON.valueToTree(RunView.metadata(run)));
    code.set("outputs", outputs(run, n));
    code.set("source", lines(run.code()));
  }

  /** Stdout, stderr, displays, the result, then the error (or the server's reason for stopping). */
  private static ArrayNode outputs(RunRecord run, int n) {
    ArrayNode out = JSON.createArrayNode();
    stream(out, "stdout", run.stdout(), run.stdoutTruncated(), run.stdoutBytes());
    stream(out, "stderr", run.stderr(), run.stderrTruncated(), run.stderrBytes());
    for (Map<String, Object> display : run.displays()) {
      ObjectNode data = bundle(display);
      if (data != null) {
        ObjectNode o = out.addObject().put("output_type", "display_data");
        o.set("data", data);
        o.putObject("metadata");
      }
    }
    ObjectNode result = bundle(run.result());
    if (result != null) {
      ObjectNode o = out.addObject().put("output_type", "execute_result").put("execution_count", n);
      o.set("data", result);
      o.putObject("metadata");
    }
    ErrorInfo error = run.error();
    if (error == null && RunView.stoppedByServer(run)) {
      error = RunView.serverStop(run);
    }
    if (error != null) {
      String name = RunView.text(error.name(), "Error");
      String value = RunView.text(error.value(), "");
      ObjectNode o = out.addObject().put("output_type", "error");
      o.put("ename", name).put("evalue", value);
      ArrayNode tb = o.putArray("traceback");
      if (RunView.blank(error.traceback())) {
        tb.add(value.isEmpty() ? name : name + ": " + value);
      } else {
        for (String line : error.traceback().stripTrailing().split("\n", -1)) {
          tb.add(line);
        }
      }
    }
    return out;
  }

  private static void stream(ArrayNode out, String name, String text, boolean cut, long bytes) {
    if (text == null || text.isEmpty()) {
      return;
    }
    String shown = text;
    if (cut) {
      shown +=
          (text.endsWith("\n") ? "" : "\n")
              + "[pysandbox: "
              + name
              + " truncated: "
              + bytes
              + " bytes were written; the head and the tail are kept]\n";
    }
    out.addObject().put("output_type", "stream").put("name", name).set("text", lines(shown));
  }

  /** The MIME types of {@code bundle} a notebook can hold, or {@code null} when none is left. */
  private static ObjectNode bundle(Map<String, Object> bundle) {
    if (bundle == null) {
      return null;
    }
    ObjectNode data = JSON.createObjectNode();
    for (Map.Entry<String, Object> e : bundle.entrySet()) {
      String mime = e.getKey();
      Object value = e.getValue();
      if (mime == null || value == null || !MIME.matcher(mime).matches()) {
        continue;
      }
      if (value instanceof String s) {
        data.put(mime, s);
      } else if (JSON_MIME.matcher(mime).matches()) {
        data.set(mime, JSON.valueToTree(value));
      }
    }
    return data.isEmpty() ? null : data;
  }

  /** {@code text} as nbformat keeps multi-line text: lines, each with its line break. */
  private static ArrayNode lines(String text) {
    ArrayNode a = JSON.createArrayNode();
    List<String> parts = new ArrayList<>();
    int start = 0;
    for (int i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', start)) {
      parts.add(text.substring(start, i + 1));
      start = i + 1;
    }
    if (start < text.length()) {
      parts.add(text.substring(start));
    }
    parts.forEach(a::add);
    return a;
  }

  /** A cell id from the run id (its id characters, at most 40) and the run's place. */
  static String cellId(String runId, int n) {
    String safe = NOT_ID_CHAR.matcher(RunView.text(runId, "")).replaceAll("");
    if (safe.length() > 40) {
      safe = safe.substring(0, 40);
    }
    return (safe.isEmpty() ? "run" : safe) + "-" + n;
  }

  /**
   * Surrogates written as {@code \\uXXXX}: a lone one (code can send any string) cannot be encoded
   * as UTF-8, and escaped it is still JSON that Python reads back as it was.
   */
  private static final class SurrogateEscapes extends CharacterEscapes {
    private final int[] ascii = CharacterEscapes.standardAsciiEscapesForJSON();

    @Override
    public int[] getEscapeCodesForAscii() {
      return ascii;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
      return Character.isSurrogate((char) ch)
          ? new SerializedString(String.format("\\u%04x", ch))
          : null;
    }
  }

  private static String write(ObjectNode nb) {
    try {
      return PRETTY.writeValueAsString(nb) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("could not write a notebook: " + e.getMessage(), e);
    }
  }
}

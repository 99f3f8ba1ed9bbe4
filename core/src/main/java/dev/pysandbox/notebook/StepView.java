package dev.pysandbox.notebook;

import dev.pysandbox.api.Json;
import dev.pysandbox.api.SessionStep;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A session step (globals set or cleared, a file put into the workspace) as both notebook formats
 * tell it: a markdown line, and code that does it again where it can (the globals, from the JSON
 * the session was given, decoded by the cell) or checks it where it cannot (a file must be in the
 * working directory with the sha256 the session's had, else the cell stops the notebook saying
 * which). Every value and name a caller chose is data: a JSON text inside one Python string literal
 * ({@link PythonText#literal}), never code.
 */
final class StepView {
  /** What a cell that checks a file runs; the file's facts come in as JSON. */
  private static final String CHECK_FILE =
      "def _pysandbox_check_file(f):\n"
          + "    import hashlib\n"
          + "    digest = hashlib.sha256()\n"
          + "    try:\n"
          + "        with open(f[\"path\"], \"rb\") as fh:\n"
          + "            for chunk in iter(lambda: fh.read(1 << 20), b\"\"):\n"
          + "                digest.update(chunk)\n"
          + "    except FileNotFoundError:\n"
          + "        raise FileNotFoundError(\n"
          + "            \"pysandbox: %s is missing: run this notebook in a directory that holds the"
          + " files the session was given (this one: %d bytes, sha256 %s)\"\n"
          + "            % (f[\"path\"], f[\"size_bytes\"], f[\"sha256\"])) from None\n"
          + "    if digest.hexdigest() != f[\"sha256\"]:\n"
          + "        raise ValueError(\n"
          + "            \"pysandbox: %s is not the file the session was given: sha256 %s, expected"
          + " %s\" % (f[\"path\"], digest.hexdigest(), f[\"sha256\"]))\n"
          + "\n"
          + "\n";

  /**
   * Global names a cleared context keeps: the notebook's own (IPython's history and helpers,
   * display, marimo's {@code mo}) and the private ones. The session kept none but display: a name
   * of the code's that starts with an underscore, or is {@code mo}, survives here.
   */
  private static final String CLEAR =
      "for _name in [n for n in list(globals()) if not n.startswith(\"_\")\n"
          + "              and n not in (\"display\", \"mo\", \"In\", \"Out\", \"get_ipython\","
          + " \"exit\", \"quit\")]:\n"
          + "    del globals()[_name]\n";

  private StepView() {}

  /** The markdown line above the step's code: what it was and when. */
  static String markdown(SessionStep step) {
    StringBuilder b =
        new StringBuilder("**")
            .append(MarkdownText.escapeLine(RunView.text(step.kind(), "step")))
            .append("**");
    if (!RunView.blank(step.at())) {
      b.append(" · ").append(MarkdownText.escapeLine(step.at()));
    }
    Map<String, Object> d = step.detail();
    switch (RunView.text(step.kind(), "")) {
      case SessionStep.SET_CONTEXT -> {
        Object values = d.get("values");
        String names =
            values instanceof Map<?, ?> m
                ? String.join(", ", m.keySet().stream().map(String::valueOf).toList())
                : "";
        b.append(" — globals set from JSON: ").append(MarkdownText.escapeLine(names));
      }
      case SessionStep.CLEAR_CONTEXT -> b.append(" — the globals were reset (files stay)");
      default -> {
        b.append(" — file ")
            .append(MarkdownText.escapeLine(String.valueOf(d.get("path"))))
            .append(" (")
            .append(MarkdownText.escapeLine(String.valueOf(d.get("size_bytes"))))
            .append(" bytes, sha256 ")
            .append(MarkdownText.escapeLine(String.valueOf(d.get("sha256"))))
            .append(")");
        if (d.get("url") != null) {
          b.append(" from ").append(MarkdownText.escapeLine(String.valueOf(d.get("url"))));
        }
        b.append(": it must be in the working directory, unchanged");
      }
    }
    return b.toString();
  }

  /** The step's code: Python source whose only caller-chosen text is one string literal. */
  static String code(SessionStep step) {
    Map<String, Object> d = step.detail();
    return switch (RunView.text(step.kind(), "")) {
      case SessionStep.SET_CONTEXT ->
          "# set_context: the globals the session was given, decoded from the JSON it was given\n"
              + "globals().update(__import__(\"json\").loads("
              + PythonText.literal(Json.write(d.getOrDefault("values", Map.of())))
              + "))\n";
      case SessionStep.CLEAR_CONTEXT ->
          "# clear_context: the session's globals were reset here\n" + CLEAR;
      case SessionStep.UPLOAD_FILE, SessionStep.DOWNLOAD_FILE ->
          "# "
              + step.kind()
              + ": the session was given this file; what follows needs it here, unchanged\n"
              + CHECK_FILE
              + "_pysandbox_check_file(__import__(\"json\").loads("
              + PythonText.literal(Json.write(fileFacts(d)))
              + "))\n";
      default -> PythonText.comment(RunView.text(step.kind(), "") + ": not replayed") + "\n";
    };
  }

  private static Map<String, Object> fileFacts(Map<String, Object> d) {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("path", String.valueOf(d.get("path")));
    f.put("size_bytes", d.get("size_bytes"));
    f.put("sha256", String.valueOf(d.get("sha256")));
    return f;
  }

  /** The step's facts for a notebook's metadata (the values set are in its code only). */
  static Map<String, Object> metadata(SessionStep step) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("step", step.kind());
    m.put("at", step.at());
    if (step.afterRunId() != null) {
      m.put("after_run_id", step.afterRunId());
    }
    step.detail()
        .forEach(
            (k, v) -> {
              if (!"values".equals(k)) {
                m.put(k, v);
              }
            });
    return m;
  }
}

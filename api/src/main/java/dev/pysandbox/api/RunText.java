package dev.pysandbox.api;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A run as text for people, in the two forms the faces show. One renderer, so that every face says
 * the same things about a run: its status line, when its message is worth showing (no error, or a
 * kill), the error as its traceback (else {@code name: value}), the trailing expression's {@code
 * text/plain}, how many displays, and each file with its size and type or why it was not kept.
 *
 * <p>The forms differ on purpose:
 *
 * <ul>
 *   <li>{@link #summary}: the text content of an MCP tool result, for clients that show only text.
 *       A status line (with exit code and kill reason), then each non-empty part under a {@code ---
 *       name ---} header, each cut in the middle past 20,000 characters. Nothing is escaped: it
 *       travels inside JSON.
 *   <li>{@link #terminal}: for a person at a terminal ({@code pysandbox run}, {@code runs show}).
 *       The code's stdout and stderr come first, as running the script here would print them, then
 *       {@code [pysandbox]} notes on stderr. What the sandbox chose (message, file names) is always
 *       passed through the caller's escape; the code's own output only when asked.
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class RunText {
  private static final int MAX_TEXT_SECTION = 20_000;

  /**
   * One piece of terminal output, in order.
   *
   * @param toStderr whether it goes to standard error (else standard output)
   * @param text what to print, never {@code null}
   */
  public record Part(boolean toStderr, String text) {}

  private RunText() {}

  /** The summary form (see the class comment); ends with a newline. */
  public static String summary(RunRecord run) {
    StringBuilder s = new StringBuilder();
    s.append(statusLine(run));
    if (run.exitCode() != null && run.exitCode() != 0) {
      s.append(" (exit code ").append(run.exitCode()).append(')');
    }
    if (run.killReason() != null) {
      s.append(" [").append(run.killReason()).append(']');
    }
    s.append('\n');
    if (messageWorthShowing(run)) {
      s.append(run.message()).append('\n');
    }
    section(s, "stdout", run.stdout(), run.stdoutTruncated());
    section(s, "stderr", run.stderr(), run.stderrTruncated());
    section(s, "error", errorText(run), false);
    section(s, "result", resultText(run), false);
    section(s, "risk findings", FindingText.lines(run.riskFindings()), false);
    if (!run.displays().isEmpty()) {
      s.append("[").append(run.displays().size()).append(" display output(s)]\n");
    }
    if (!run.outputs().isEmpty()) {
      section(s, "outputs", Json.write(run.outputs()), false);
    }
    if (!run.artifacts().isEmpty()) {
      s.append("--- files in /mnt/data ---\n");
      run.artifacts()
          .forEach(
              a ->
                  s.append(a.change())
                      .append(' ')
                      .append(a.path())
                      .append(' ')
                      .append(fileNote(a))
                      .append('\n'));
    }
    return s.toString();
  }

  /**
   * The terminal form (see the class comment).
   *
   * @param escape makes text from the sandbox safe to print on a terminal
   * @param escapeOutput whether the code's stdout, stderr, error and result go through {@code
   *     escape} too (a person's terminal), or as they are (a pipe, as the script would print)
   */
  public static List<Part> terminal(
      RunRecord run, UnaryOperator<String> escape, boolean escapeOutput) {
    return terminal(run, escape, escapeOutput, true);
  }

  /**
   * The terminal form, without the code's stdout and stderr when they were already printed as the
   * run went ({@code withOutput} false).
   */
  public static List<Part> terminal(
      RunRecord run, UnaryOperator<String> escape, boolean escapeOutput, boolean withOutput) {
    UnaryOperator<String> output = escapeOutput ? escape : t -> t;
    List<Part> parts = new ArrayList<>();
    if (withOutput) {
      add(parts, false, output.apply(run.stdout()));
      add(parts, true, output.apply(run.stderr()));
    }
    if (run.error() != null) {
      String tb = traceback(run);
      add(parts, true, output.apply(tb != null ? tb : errorText(run) + "\n"));
    }
    String result = resultText(run);
    if (result != null) {
      add(parts, false, output.apply(result) + "\n");
    }
    StringBuilder s = new StringBuilder();
    s.append("\n[pysandbox] ").append(statusLine(run)).append('\n');
    if (messageWorthShowing(run)) {
      s.append("[pysandbox] ").append(escape.apply(run.message())).append('\n');
    }
    if (run.stdoutTruncated() || run.stderrTruncated()) {
      s.append("[pysandbox] output truncated: ")
          .append(run.stdoutBytes())
          .append(" bytes of stdout, ")
          .append(run.stderrBytes())
          .append(" bytes of stderr produced\n");
    }
    if (!run.displays().isEmpty()) {
      s.append("[pysandbox] ")
          .append(run.displays().size())
          .append(" display output(s) recorded\n");
    }
    if (!run.artifacts().isEmpty()) {
      s.append("[pysandbox] files written to /mnt/data")
          .append(run.artifactsDir() == null ? ", none kept" : ", kept in " + run.artifactsDir())
          .append(":\n");
      run.artifacts()
          .forEach(
              a ->
                  s.append("[pysandbox]   ")
                      .append(escape.apply(a.path()))
                      .append("  ")
                      .append(fileNote(a))
                      .append('\n'));
    }
    if (run.runId() != null) {
      s.append("[pysandbox] see it again: pysandbox runs show ").append(run.runId()).append('\n');
    }
    parts.add(new Part(true, s.toString()));
    return parts;
  }

  /** "run ID: status", and " in N ms" once it has a duration; "dry run" for one without an id. */
  private static String statusLine(RunRecord run) {
    if (run.runId() == null) {
      return run.status() == RunStatus.DRY_RUN ? "dry run: nothing ran" : run.status().wireName();
    }
    return "run "
        + run.runId()
        + ": "
        + run.status().wireName()
        + (run.durationMs() != null ? " in " + run.durationMs() + " ms" : "");
  }

  /** The message says why when there is no error to say it, or when the server stopped the run. */
  private static boolean messageWorthShowing(RunRecord run) {
    return run.message() != null
        && (run.error() == null || run.killReason() != null || run.status() == RunStatus.DRY_RUN);
  }

  /** The traceback, else "name: value"; {@code null} without an error. */
  private static String errorText(RunRecord run) {
    if (run.error() == null) {
      return null;
    }
    String tb = traceback(run);
    return tb != null ? tb : run.error().name() + ": " + run.error().value();
  }

  /** The error's traceback as the runner wrote it, or {@code null} when it has none. */
  private static String traceback(RunRecord run) {
    String tb = run.error() == null ? null : run.error().traceback();
    return tb != null && !tb.isBlank() ? tb : null;
  }

  /** The trailing expression's text/plain, or {@code null}. */
  private static String resultText(RunRecord run) {
    return run.result() != null && run.result().get("text/plain") instanceof String plain
        ? plain
        : null;
  }

  private static String fileNote(Artifact a) {
    if (a.skipped() != null) {
      // Reasons of the collection budget and the quotas say "not kept" (or "not hashed or
      // kept") themselves.
      return a.skipped().startsWith("not ")
          ? "(" + a.skipped() + ")"
          : "(not kept: " + a.skipped() + ")";
    }
    return "(" + a.sizeBytes() + " bytes, " + a.mediaType() + ")";
  }

  private static void add(List<Part> parts, boolean toStderr, String text) {
    if (text != null && !text.isEmpty()) {
      parts.add(new Part(toStderr, text));
    }
  }

  private static void section(StringBuilder s, String name, String text, boolean truncated) {
    if (text == null || text.isEmpty()) {
      return;
    }
    s.append("--- ").append(name).append(truncated ? " (truncated) ---\n" : " ---\n");
    if (text.length() > MAX_TEXT_SECTION) {
      s.append(text, 0, MAX_TEXT_SECTION / 2)
          .append("\n[... ")
          .append(text.length() - MAX_TEXT_SECTION)
          .append(" characters not shown here; see structuredContent ...]\n")
          .append(text, text.length() - MAX_TEXT_SECTION / 2, text.length());
    } else {
      s.append(text);
    }
    if (!text.endsWith("\n")) {
      s.append('\n');
    }
  }
}

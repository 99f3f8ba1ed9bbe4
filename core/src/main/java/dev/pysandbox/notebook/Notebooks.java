package dev.pysandbox.notebook;

import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionStep;
import java.util.List;
import java.util.Objects;

/**
 * A recorded run, or a session's runs, as a notebook for review: Jupyter's {@code .ipynb} (nbformat
 * 4.5) and marimo's {@code .py}, which also runs with plain {@code python3}.
 *
 * <p>Each run becomes a markdown cell (its description as plain text, then its id, status — marked
 * ⚠ with the reason when it did not succeed —, creation time and duration) and a code cell. In the
 * {@code .ipynb}, the code cell's outputs are what the run printed (stdout, stderr, a note where
 * the server cut them), displayed, returned and raised, or why the server stopped it; its metadata
 * ({@code pysandbox}) holds the run's facts. In the {@code .py}, code that did not compile is kept
 * as text and a run the server stopped is a disabled cell, so that running the file never repeats a
 * timeout, a limit breach or a cancelled loop.
 *
 * <p>Every text a caller or the sandbox chose (description, ids, title, messages, outputs) is data
 * in both formats: escaped as Markdown text, JSON strings, Python string literals or comments. No
 * method reads a file or keeps state; all are thread-safe. Records must have {@code code} set.
 */
public final class Notebooks {
  private Notebooks() {}

  /**
   * @return nbformat 4.5 JSON of one run, indented, ending with a newline
   * @throws NullPointerException when {@code run} or its code is {@code null}
   */
  public static String ipynb(RunRecord run) {
    return IpynbWriter.one(checked(run));
  }

  /**
   * A session's runs (or any runs) and steps as one notebook: a title cell, then each run's cells
   * in the order given, numbered 1..n; the steps (globals set or cleared, files put into its
   * workspace) stand among the runs where they happened, each a markdown cell and a code cell that
   * does it again — the globals from the JSON the session was given, decoded in the cell — or, for
   * a file, checks that it is in the working directory with the sha256 the session's had.
   *
   * @param title the notebook's title; when {@code null} or blank, one naming the session
   * @return nbformat 4.5 JSON, indented, ending with a newline
   * @throws NullPointerException when {@code runs}, a run or its code, or {@code steps} is null
   */
  public static String ipynb(List<RunRecord> runs, List<SessionStep> steps, String title) {
    return IpynbWriter.session(checked(runs), Objects.requireNonNull(steps, "steps"), title);
  }

  /**
   * @return marimo's {@code .py} text of one run (UTF-8 when written)
   * @throws NullPointerException when {@code run} or its code is {@code null}
   */
  public static String marimo(RunRecord run) {
    return MarimoWriter.one(checked(run));
  }

  /**
   * {@link #ipynb(List, List, String)} as a marimo notebook; under plain {@code python3} its cells,
   * steps included, share one namespace, as the session's runs did.
   */
  public static String marimo(List<RunRecord> runs, List<SessionStep> steps, String title) {
    return MarimoWriter.session(checked(runs), Objects.requireNonNull(steps, "steps"), title);
  }

  /**
   * An agent run as one notebook: the model's text as markdown cells, its code runs as code cells
   * with their real outputs.
   *
   * @param runs the agent run's code runs by id (those missing show as text)
   * @return nbformat 4.5 JSON, indented, ending with a newline
   */
  public static String ipynb(
      dev.pysandbox.api.agent.AgentRunInfo agent, java.util.Map<String, RunRecord> runs) {
    return IpynbWriter.agent(Objects.requireNonNull(agent, "agent"), runs);
  }

  static String defaultTitle(String sessionId) {
    return sessionId == null ? "pysandbox runs" : "pysandbox session " + sessionId;
  }

  /** The title cell: the title as a heading, then the session and how many runs did not succeed. */
  static String titleMarkdown(String title, String sessionId, List<RunRecord> runs) {
    long bad = runs.stream().filter(r -> r.status() != RunStatus.SUCCEEDED).count();
    StringBuilder b = new StringBuilder("# ").append(MarkdownText.escapeLine(title)).append("\n\n");
    if (sessionId != null) {
      b.append("Session ").append(MarkdownText.escapeLine(sessionId)).append(" · ");
    }
    b.append(runs.size()).append(runs.size() == 1 ? " run" : " runs");
    if (bad > 0) {
      b.append(" · ⚠ ").append(bad).append(" did not succeed");
    }
    return b.toString();
  }

  private static RunRecord checked(RunRecord run) {
    Objects.requireNonNull(run, "run");
    Objects.requireNonNull(run.code(), () -> "run " + run.runId() + " has no code");
    return run;
  }

  private static List<RunRecord> checked(List<RunRecord> runs) {
    Objects.requireNonNull(runs, "runs");
    runs.forEach(Notebooks::checked);
    return runs;
  }
}

package dev.pysandbox.cli;

import dev.pysandbox.api.agent.AgentBudgetUse;
import dev.pysandbox.api.agent.AgentEvent;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.api.agent.AgentUsage;
import java.io.PrintStream;
import java.util.Locale;

/**
 * An agent run for a person: a line per step as {@code agent run} follows it and {@code agent show}
 * lists it (index, kind, a short view: the model's first line, the code's first line with its run
 * and status, tokens), the summary of its end, and the exit code {@code agent run} gives it. What
 * the model or the sandbox wrote is escaped for the terminal ({@link TerminalText}).
 */
final class AgentText {
  /** What a view of the model's text or the code keeps of its first line. */
  static final int SHORT = 100;

  private AgentText() {}

  /** 0 when it succeeded; 1 when it failed, ran out of a budget, was cancelled or interrupted. */
  static int exitCode(AgentRunInfo run) {
    return run.status() == AgentRunStatus.SUCCEEDED ? 0 : RunCommand.EXIT_FAILED;
  }

  /**
   * Prints what {@code e} says for a person following the agent run: a step's line, a held run's
   * wait, the answer (on {@code out}); {@code run} and {@code done} print nothing here.
   */
  static void event(AgentEvent e, PrintStream out, PrintStream err) {
    switch (e.type()) {
      case "step" -> {
        if (e.step() != null) {
          err.println(step(e.step()));
        } else if (e.runId() != null) {
          err.println(
              "     run "
                  + e.runId()
                  + " waits for a person's approval (pysandbox approvals list)");
        }
      }
      case "answer" -> out.println(TerminalText.escape(e.answer()));
      default -> {}
    }
    err.flush();
    out.flush();
  }

  /** One step on one line: {@code [2] code x = 6 * 7 … → run_… succeeded (41 ms)}. */
  static String step(AgentStep s) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "[%d] %-6s ", s.index(), s.kind().wireName()));
    switch (s.kind()) {
      case CODE -> {
        b.append(firstLine(s.code()));
        if (s.runId() != null) {
          b.append(" -> ").append(s.runId()).append(' ').append(s.runStatus());
        }
        if (s.durationMs() >= 0 && s.runStatus() != null) {
          b.append(" (").append(s.durationMs()).append(" ms)");
          if (s.output() != null && !s.output().isBlank()) {
            b.append(": ").append(firstLine(s.output()));
          }
        }
      }
      case MODEL, SUBCALL -> {
        b.append(s.text() == null || s.text().isBlank() ? "(no text)" : firstLine(s.text()));
        if (s.tool() != null) {
          b.append(" [calls ").append(TerminalText.escape(s.tool())).append(']');
        }
      }
      case TOOL -> {
        b.append(s.tool() == null ? "(no tool)" : TerminalText.escape(s.tool()));
        if (s.text() != null) {
          b.append(": ").append(firstLine(s.text()));
        }
      }
    }
    if (s.tokensIn() != null || s.tokensOut() != null) {
      b.append(
          String.format(
              Locale.ROOT,
              "  tokens %s in / %s out%s",
              s.tokensIn(),
              s.tokensOut(),
              Boolean.TRUE.equals(s.tokensEstimated()) ? " (estimated)" : ""));
    }
    if (s.error() != null) {
      b.append("  error: ").append(firstLine(s.error()));
    }
    return b.toString();
  }

  /** The end of an agent run, in a line: status, why, what it spent. */
  static String summary(AgentRunInfo r) {
    AgentUsage u = r.usage();
    return String.format(
        Locale.ROOT,
        "[pysandbox] agent run %s %s%s: %d steps, %d iterations, %d tokens%s, %.1f s; session %s",
        r.agentRunId(),
        r.status().wireName(),
        r.stopReason() == null ? "" : " (" + TerminalText.escape(r.stopReason()) + ")",
        r.steps().size(),
        u.iterations(),
        u.totalTokens(),
        u.tokensEstimated() ? " (estimated)" : "",
        u.seconds(),
        r.sessionId());
  }

  /** {@code agent show}: the agent run's facts, its steps, its answer. */
  static void show(AgentRunInfo r, PrintStream out) {
    out.println("agent run:   " + r.agentRunId());
    out.println("status:      " + r.status().wireName());
    if (r.stopReason() != null) {
      out.println("why:         " + TerminalText.escape(r.stopReason()));
    }
    if (r.errorCode() != null) {
      out.println(
          "error:       "
              + r.errorCode()
              + (Boolean.TRUE.equals(r.retryable()) ? " (retryable)" : ""));
    }
    if (r.approvalId() != null) {
      out.println("waits for:   approval " + r.approvalId());
    }
    out.println(
        "model:       "
            + r.provider()
            + (r.model() == null ? "" : " " + TerminalText.escape(r.model())));
    out.println(
        "session:     " + r.sessionId() + (r.ownSession() ? " (its own)" : " (the caller's)"));
    out.println(
        "created:     " + r.createdAt() + (r.endedAt() == null ? "" : ", ended " + r.endedAt()));
    AgentUsage u = r.usage();
    out.printf(
        Locale.ROOT,
        "usage:       %d iterations, %d subcalls, tokens %d in / %d out%s, %.1f s%n",
        u.iterations(),
        u.subcalls(),
        u.promptTokens(),
        u.completionTokens(),
        u.tokensEstimated() ? " (estimated)" : "",
        u.seconds());
    for (AgentBudgetUse b : r.budgetUse()) {
      out.printf(Locale.ROOT, "budget:      %-20s %d of %d used%n", b.name(), b.used(), b.limit());
    }
    out.println("--- task ---");
    out.println(TerminalText.escape(r.task().stripTrailing()));
    out.println("--- steps ---");
    for (AgentStep s : r.steps()) {
      out.println(step(s));
    }
    if (r.answer() != null) {
      out.println("--- answer ---");
      out.println(TerminalText.escape(r.answer().stripTrailing()));
    }
  }

  /** The first line of {@code text}, escaped, cut to {@link #SHORT} characters. */
  static String firstLine(String text) {
    if (text == null) {
      return "";
    }
    String t = text.strip();
    int nl = t.indexOf('\n');
    boolean more = nl >= 0;
    String line = more ? t.substring(0, nl).stripTrailing() : t;
    if (line.length() > SHORT) {
      line = line.substring(0, SHORT);
      more = true;
    }
    return TerminalText.escape(line) + (more ? " ..." : "");
  }
}

package dev.pysandbox.notebook;

import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a run record says, as both notebook formats tell it: how the run ended, in words and as an
 * error a notebook can show, whether its code is known to compile, and the facts kept in metadata.
 */
final class RunView {
  private static final Set<String> COMPILE_ERRORS =
      Set.of("SyntaxError", "IndentationError", "TabError");

  /**
   * How the runner's tracebacks start when a frame of the code ran (none when compiling failed).
   */
  private static final String RAN = "Traceback (most recent call last)";

  private static final int DETAIL_MAX = 300;

  private RunView() {}

  /**
   * True when the server stopped the run (a limit, a cancel, a restart): such code is not run again
   * by a notebook replay, whatever it did in the sandbox (a loop, a fork bomb, a disk filler).
   */
  static boolean stoppedByServer(RunRecord run) {
    return run.killReason() != null
        || run.status() == RunStatus.TIMED_OUT
        || run.status() == RunStatus.CANCELLED
        || run.status() == RunStatus.INTERRUPTED;
  }

  /**
   * True when the runner failed to compile the code: its SyntaxError (or IndentationError,
   * TabError) has no frame of the code, as the runner drops its own frames; a SyntaxError the code
   * raised at run time (from {@code compile()} or {@code exec()}) has the code's frame.
   */
  static boolean failedToCompile(RunRecord run) {
    ErrorInfo e = run.error();
    return e != null
        && e.name() != null
        && COMPILE_ERRORS.contains(e.name())
        && (e.traceback() == null || !e.traceback().startsWith(RAN));
  }

  /**
   * True when the record shows that the code compiled: it ran to an end of its own, raised from a
   * frame of its own, or was stopped while executing. Runs that never reached the runner (rejected,
   * awaiting approval, cancelled first) are not known to be Python at all.
   */
  static boolean compiled(RunRecord run) {
    if (failedToCompile(run)) {
      return false;
    }
    ErrorInfo e = run.error();
    return run.status() == RunStatus.SUCCEEDED
        || run.status() == RunStatus.FAILED
        || run.status() == RunStatus.TIMED_OUT
        || run.killReason() != null
        || (e != null && e.traceback() != null && e.traceback().startsWith(RAN));
  }

  /** {@code timed out}: the status as words. */
  static String statusWords(RunRecord run) {
    return run.status() == null ? "unknown" : run.status().wireName().replace('_', ' ');
  }

  /**
   * Why the run did not succeed, on one line ({@code ZeroDivisionError: division by zero}, the
   * server's message), or {@code null} when it did.
   */
  static String problem(RunRecord run) {
    if (run.status() == RunStatus.SUCCEEDED && run.error() == null) {
      return null;
    }
    ErrorInfo e = run.error();
    String detail;
    if (e != null && !stoppedByServer(run)) {
      detail = text(e.name(), "Error") + (blank(e.value()) ? "" : ": " + e.value());
    } else if (!blank(run.message())) {
      detail = run.message();
    } else if (e != null) {
      detail = text(e.name(), "Error") + (blank(e.value()) ? "" : ": " + e.value());
    } else {
      detail = run.killReason() != null ? run.killReason().wireName() : statusWords(run);
    }
    String line = detail.replaceAll("\\s+", " ").strip();
    return line.length() > DETAIL_MAX ? line.substring(0, DETAIL_MAX) + "…" : line;
  }

  /**
   * The error a notebook shows for a run the server stopped without one from the code: its name
   * (after the kill reason or the status) and value (the server's message).
   */
  static ErrorInfo serverStop(RunRecord run) {
    String name;
    if (run.killReason() == KillReason.TIMEOUT || run.status() == RunStatus.TIMED_OUT) {
      name = "TimeoutError";
    } else if (run.killReason() != null) {
      name = "SandboxKilled";
    } else if (run.status() == RunStatus.CANCELLED) {
      name = "RunCancelled";
    } else {
      name = "RunInterrupted";
    }
    String value =
        blank(run.message()) ? "stopped by pysandbox (" + statusWords(run) + ")" : run.message();
    return new ErrorInfo(name, value, null);
  }

  /**
   * The markdown line that heads a run's cell: run id and status, marked ⚠ with the problem when
   * the run did not succeed, then when it was created and how long it took.
   */
  static String headline(RunRecord run) {
    String problem = problem(run);
    StringBuilder b =
        new StringBuilder("**").append(MarkdownText.escapeLine(text(run.runId(), "run")));
    b.append(" — ");
    if (problem != null) {
      b.append("⚠ ");
    }
    b.append(MarkdownText.escapeLine(statusWords(run))).append("**");
    if (problem != null && !problem.equals(statusWords(run))) {
      b.append(": ").append(MarkdownText.escapeLine(problem));
    }
    if (!blank(run.createdAt())) {
      b.append(" · ").append(MarkdownText.escapeLine(run.createdAt()));
    }
    if (run.durationMs() != null) {
      b.append(" · ").append(run.durationMs()).append(" ms");
    }
    return b.toString();
  }

  /** The markdown above a run's code: its description (as text), then {@link #headline}. */
  static String markdown(RunRecord run) {
    String headline = headline(run);
    return blank(run.description())
        ? headline
        : MarkdownText.escape(run.description().strip()) + "\n\n" + headline;
  }

  /** The run's facts for a notebook's metadata, nulls left out. */
  static Map<String, Object> metadata(RunRecord run) {
    Map<String, Object> m = new LinkedHashMap<>();
    put(m, "run_id", run.runId());
    put(m, "session_id", run.sessionId());
    put(m, "parent_run_id", run.parentRunId());
    put(m, "status", run.status() == null ? null : run.status().wireName());
    put(m, "code_sha256", run.codeHash());
    put(m, "created_at", run.createdAt());
    put(m, "finished_at", run.finishedAt());
    put(m, "duration_ms", run.durationMs());
    put(m, "limits", run.limits().isEmpty() ? null : run.limits());
    put(m, "tier", run.tier());
    put(m, "timeout_seconds", run.timeoutSeconds());
    put(m, "interpreter", run.interpreter());
    put(m, "env_hash", run.envHash());
    put(m, "server_version", run.serverVersion());
    put(m, "backend", run.backend());
    put(m, "exit_code", run.exitCode());
    put(m, "kill_reason", run.killReason() == null ? null : run.killReason().wireName());
    return m;
  }

  static boolean blank(String s) {
    return s == null || s.isBlank();
  }

  static String text(String s, String ifNull) {
    return s == null ? ifNull : s;
  }

  private static void put(Map<String, Object> m, String key, Object value) {
    if (value != null) {
      m.put(key, value);
    }
  }
}

package dev.pysandbox.cli;

import dev.pysandbox.api.TrajectoryEvent;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * A trajectory line as a person reads it, on one line: time, face, tool, session, run, status, run
 * status, duration, request id, arguments. Every field went through {@link TerminalText}: tool and
 * argument names may be a caller's choice.
 *
 * <pre>
 * 2026-11-25T15:01:02.123Z mcp_http run_python sess_x run_… ok succeeded 12.3 ms args: code=120B
 * </pre>
 */
final class TrajectoryText {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
          .withZone(ZoneOffset.UTC);
  private static final int MAX_SHOWN_CHARS = 200;

  private TrajectoryText() {}

  static String line(TrajectoryEvent e, Instant time) {
    StringBuilder b = new StringBuilder(160);
    b.append(TIME.format(time))
        .append(' ')
        .append(text(e.face()))
        .append(' ')
        .append(text(e.tool()))
        .append(' ')
        .append(text(e.sessionId()))
        .append(' ')
        .append(text(e.runId()))
        .append(' ')
        .append(text(e.status()));
    if (e.errorCode() != null) {
      b.append(' ').append(text(e.errorCode()));
    }
    if (e.runStatus() != null) {
      b.append(' ').append(text(e.runStatus()));
    }
    b.append(String.format(Locale.ROOT, " %.1f ms", e.durationMs()));
    if (e.requestId() != null) {
      b.append(" req=").append(text(e.requestId()));
    }
    if (e.arguments() != null && !e.arguments().isEmpty()) {
      b.append(" args:");
      e.arguments()
          .forEach(
              (name, size) ->
                  b.append(' ').append(text(name)).append('=').append(text(String.valueOf(size))));
    }
    if (e.argumentsOmitted() != null) {
      b.append(" (+").append(e.argumentsOmitted()).append(" arguments not listed)");
    }
    return b.toString();
  }

  /** A line that is not an event, shown as what it is. */
  static String malformed(String file, String line) {
    String shown =
        line.length() > MAX_SHOWN_CHARS ? line.substring(0, MAX_SHOWN_CHARS) + "..." : line;
    return "(malformed line in " + file + ": " + TerminalText.escape(shown) + ")";
  }

  private static String text(String s) {
    if (s == null) {
      return "-";
    }
    String shown = s.length() > MAX_SHOWN_CHARS ? s.substring(0, MAX_SHOWN_CHARS) + "..." : s;
    return TerminalText.escape(shown).replace('\n', ' ').replace('\t', ' ');
  }
}

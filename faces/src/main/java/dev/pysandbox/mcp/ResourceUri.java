package dev.pysandbox.mcp;

import dev.pysandbox.api.Ids;
import dev.pysandbox.util.StrictUtf8;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code pysandbox://} resource URI, parsed: what it names and the ids and path in it. A file's
 * path is the rest of the URI after {@code files/}, percent-decoded (RFC 3986: {@code %20} for a
 * space, {@code %25} for a percent sign); it is checked by the core as a tool's path is.
 *
 * @param runId the run, or null for a session's file
 * @param sessionId the session, or null for what belongs to a run
 * @param path the decoded file path, or null when the URI names no file
 * @param index the display's index, or -1
 */
record ResourceUri(Kind kind, String runId, String sessionId, String path, int index) {
  /** What a URI names. */
  enum Kind {
    RUN,
    RUN_FILE,
    SESSION_FILE,
    RUN_DISPLAY,
    RUN_RESULT
  }

  static final String RUNS = "pysandbox://runs/";
  static final String SESSIONS = "pysandbox://sessions/";

  private static final Pattern RUN =
      Pattern.compile(
          Pattern.quote(RUNS)
              + "("
              + Ids.REGEX
              + ")(?:/files/(.+)|/displays/(\\d{1,6})|/(result))?",
          Pattern.DOTALL);
  private static final Pattern SESSION =
      Pattern.compile(Pattern.quote(SESSIONS) + "(" + Ids.REGEX + ")/files/(.+)", Pattern.DOTALL);

  /** Thrown for a URI of ours whose path cannot be decoded. */
  static final class BadPath extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    BadPath(String message) {
      super(message);
    }
  }

  /**
   * @return the URI parsed, or null when it names nothing pysandbox serves
   * @throws BadPath when the path's percent-encoding is broken or not UTF-8
   */
  static ResourceUri parse(String uri) {
    if (uri == null) {
      return null;
    }
    Matcher m = RUN.matcher(uri);
    if (m.matches()) {
      String run = m.group(1);
      if (m.group(2) != null) {
        return new ResourceUri(Kind.RUN_FILE, run, null, decode(m.group(2)), -1);
      }
      if (m.group(3) != null) {
        return new ResourceUri(Kind.RUN_DISPLAY, run, null, null, Integer.parseInt(m.group(3)));
      }
      return new ResourceUri(m.group(4) != null ? Kind.RUN_RESULT : Kind.RUN, run, null, null, -1);
    }
    m = SESSION.matcher(uri);
    if (m.matches()) {
      return new ResourceUri(Kind.SESSION_FILE, null, m.group(1), decode(m.group(2)), -1);
    }
    return null;
  }

  static String run(String runId) {
    return RUNS + runId;
  }

  static String display(String runId, int index) {
    return RUNS + runId + "/displays/" + index;
  }

  static String result(String runId) {
    return RUNS + runId + "/result";
  }

  /** Strict percent-decoding ({@code +} stays a plus sign), the bytes read as UTF-8. */
  static String decode(String encoded) {
    if (encoded.indexOf('%') < 0) {
      return encoded;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(encoded.length());
    byte[] raw = encoded.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < raw.length; i++) {
      if (raw[i] != '%') {
        bytes.write(raw[i]);
        continue;
      }
      int hi = i + 2 < raw.length ? Character.digit(raw[i + 1], 16) : -1;
      int lo = hi >= 0 ? Character.digit(raw[i + 2], 16) : -1;
      if (lo < 0) {
        throw new BadPath(
            "the path in the URI has a '%' not followed by two hex digits (write %25 for '%')");
      }
      bytes.write(hi << 4 | lo);
      i += 2;
    }
    String text = StrictUtf8.decode(bytes.toByteArray());
    if (text == null) {
      throw new BadPath("the path in the URI is not UTF-8 once percent-decoded");
    }
    return text;
  }
}

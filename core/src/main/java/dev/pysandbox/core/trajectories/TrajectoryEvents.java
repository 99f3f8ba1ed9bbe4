package dev.pysandbox.core.trajectories;

import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.TrajectoryEvent;
import dev.pysandbox.api.TrajectoryEvent.ArgumentSize;
import dev.pysandbox.util.Sha256;
import java.io.IOException;
import java.io.OutputStream;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * A {@link CallRecord} made into the line its trajectory keeps, on the caller's thread, so that
 * nothing of the arguments outlives the call: each argument is measured (a string's UTF-8 bytes, an
 * array's items, an object's members; only numbers and booleans are kept as they are) and all of
 * them are hashed as canonical JSON. A line is at most {@link #MAX_LINE_BYTES}: names and ids are
 * cut, and a line still longer loses its argument list (counted in {@code arguments_omitted}).
 */
final class TrajectoryEvents {
  static final int MAX_LINE_BYTES = 4096;
  static final int MAX_ARGUMENTS = 24;
  static final int MAX_NAME_CHARS = 64;
  private static final int MAX_LABEL_CHARS = 128;

  /** Object members sorted by name, no white space: the same arguments give the same digest. */
  private static final ObjectWriter CANONICAL =
      Json.mapper().writer().with(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

  private TrajectoryEvents() {}

  /**
   * @param began when the call began (when the face answered less its duration)
   */
  static TrajectoryEvent of(String tenant, CallRecord call, Instant began) {
    Map<String, ?> args = call.arguments();
    Map<String, ArgumentSize> sizes = null;
    Integer omitted = null;
    if (args != null) {
      sizes = new TreeMap<>();
      for (Map.Entry<String, ?> e : new TreeMap<String, Object>(args).entrySet()) {
        if (sizes.size() == MAX_ARGUMENTS) {
          omitted = args.size() - MAX_ARGUMENTS;
          break;
        }
        sizes.put(cut(e.getKey(), MAX_NAME_CHARS), size(e.getValue()));
      }
    }
    long nanos = Math.max(0, call.durationNanos());
    return new TrajectoryEvent(
        began.truncatedTo(ChronoUnit.MICROS).toString(),
        call.face() == null ? null : call.face().wireName(),
        cut(call.tool(), MAX_LABEL_CHARS),
        tenant,
        validId(call.sessionId()),
        validId(call.runId()),
        cut(call.requestId(), MAX_LABEL_CHARS),
        sizes,
        omitted,
        args == null || args.isEmpty() ? null : digest(args),
        call.errorCode() == null ? TrajectoryEvent.OK : TrajectoryEvent.ERROR,
        call.errorCode() == null ? null : call.errorCode().wireName(),
        call.runStatus() == null ? null : call.runStatus().wireName(),
        Math.round(nanos / 1000.0) / 1000.0);
  }

  /** The event as one line of JSON, newline included, at most {@link #MAX_LINE_BYTES}. */
  static byte[] line(TrajectoryEvent e) {
    byte[] line = bytes(e);
    if (line.length > MAX_LINE_BYTES && e.arguments() != null) {
      int listed = e.arguments().size() + (e.argumentsOmitted() == null ? 0 : e.argumentsOmitted());
      line =
          bytes(
              new TrajectoryEvent(
                  e.time(),
                  e.face(),
                  e.tool(),
                  e.tenant(),
                  e.sessionId(),
                  e.runId(),
                  e.requestId(),
                  Map.of(),
                  listed,
                  e.argumentsSha256(),
                  e.status(),
                  e.errorCode(),
                  e.runStatus(),
                  e.durationMs()));
    }
    return line;
  }

  private static byte[] bytes(TrajectoryEvent e) {
    try {
      byte[] json = Json.mapper().writeValueAsBytes(e);
      byte[] line = new byte[json.length + 1];
      System.arraycopy(json, 0, line, 0, json.length);
      line[json.length] = '\n';
      return line;
    } catch (IOException x) {
      throw new IllegalStateException(x);
    }
  }

  static ArgumentSize size(Object value) {
    if (value == null) {
      return new ArgumentSize("null", null, null, null);
    }
    if (value instanceof CharSequence s) {
      return new ArgumentSize("string", utf8Length(s), null, null);
    }
    if (value instanceof Boolean b) {
      return new ArgumentSize("boolean", null, null, b);
    }
    if (value instanceof Number n) {
      return new ArgumentSize("number", null, null, n);
    }
    if (value instanceof Collection<?> c) {
      return new ArgumentSize("array", null, c.size(), null);
    }
    if (value instanceof Object[] a) {
      return new ArgumentSize("array", null, a.length, null);
    }
    if (value instanceof Map<?, ?> m) {
      return new ArgumentSize("object", null, m.size(), null);
    }
    return new ArgumentSize(value.getClass().getSimpleName(), null, null, null);
  }

  /** The UTF-8 length of {@code s}, without encoding it (an upload's content may be 64 MiB). */
  static long utf8Length(CharSequence s) {
    long n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n += 1;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3; // a lone surrogate counts as the replacement character it becomes
      }
    }
    return n;
  }

  /** Hex SHA-256 of the arguments' canonical JSON, streamed through the digest, never held. */
  static String digest(Map<String, ?> args) {
    MessageDigest md = Sha256.newDigest();
    try (OutputStream out = new DigestOutputStream(OutputStream.nullOutputStream(), md)) {
      CANONICAL.writeValue(out, args);
    } catch (IOException e) {
      return null;
    }
    return HexFormat.of().formatHex(md.digest());
  }

  private static String validId(String id) {
    return id != null && Ids.PATTERN.matcher(id).matches() ? id : null;
  }

  private static String cut(String s, int max) {
    return s == null || s.length() <= max ? s : s.substring(0, max) + "...";
  }
}

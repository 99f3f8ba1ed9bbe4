package dev.pysandbox.http.rest;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A route's path below {@code /api/v1}: literal segments, {@code {name}} for one segment, and a
 * last {@code {path}} that takes the rest, slashes included. It is matched against the path as the
 * client sent it (still percent-encoded, not normalised), and each value is decoded once, so that
 * {@code ..} or {@code %2e%2e} in a file path reaches the core as the client wrote it.
 */
final class PathTemplate {
  /** The variable that takes the rest of the path. */
  static final String REST = "path";

  private final String text;
  private final List<String> segments;

  private PathTemplate(String text) {
    this.text = text;
    this.segments = Arrays.asList(text.substring(1).split("/", -1));
  }

  /** A template such as {@code /runs/{run_id}/files/{path}}. */
  static PathTemplate of(String text) {
    return new PathTemplate(text);
  }

  String text() {
    return text;
  }

  /** The variables, in order. */
  List<String> variables() {
    List<String> out = new ArrayList<>();
    for (String s : segments) {
      if (isVariable(s)) {
        out.add(s.substring(1, s.length() - 1));
      }
    }
    return out;
  }

  /**
   * True when the raw segments have this template's shape (nothing is decoded): literals equal, a
   * variable not empty (the rest may start with an empty segment, as in {@code files//etc}, which
   * the core then refuses as an absolute path).
   */
  boolean matches(List<String> raw) {
    boolean rest =
        !segments.isEmpty() && segments.get(segments.size() - 1).equals("{" + REST + "}");
    if (rest ? raw.size() < segments.size() : raw.size() != segments.size()) {
      return false;
    }
    for (int i = 0; i < segments.size(); i++) {
      String s = segments.get(i);
      boolean matched =
          isVariable(s)
              ? !raw.get(i).isEmpty() || (rest && i == segments.size() - 1 && raw.size() > i + 1)
              : s.equals(raw.get(i));
      if (!matched) {
        return false;
      }
    }
    return true;
  }

  /**
   * The variables' values, each decoded once; call only when {@link #matches} said so.
   *
   * @throws dev.pysandbox.api.PysandboxException {@code invalid_argument} for a bad escape
   */
  Map<String, String> values(List<String> raw) {
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < segments.size(); i++) {
      String s = segments.get(i);
      if (!isVariable(s)) {
        continue;
      }
      String name = s.substring(1, s.length() - 1);
      String value =
          name.equals(REST) && i == segments.size() - 1
              ? String.join("/", raw.subList(i, raw.size()))
              : raw.get(i);
      out.put(name, PercentDecoding.decode(value, false));
    }
    return out;
  }

  private static boolean isVariable(String segment) {
    return segment.startsWith("{") && segment.endsWith("}");
  }

  @Override
  public String toString() {
    return text;
  }
}

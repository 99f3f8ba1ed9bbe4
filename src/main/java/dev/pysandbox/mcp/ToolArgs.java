package dev.pysandbox.mcp;

import dev.pysandbox.api.PysandboxException;
import java.util.Map;
import java.util.Set;

/**
 * A tool call's arguments, checked by name and type. The SDK's schema validation is off so that
 * every bad argument gets our {@code invalid_argument} error naming the argument, and an argument a
 * tool does not know is refused rather than silently ignored.
 */
final class ToolArgs {
  private final String tool;
  private final Map<String, Object> args;
  private final CallHandle call;

  /**
   * @param call the request in flight, or {@code null} when the transport does not track calls
   */
  ToolArgs(String tool, Map<String, Object> args, Set<String> known, CallHandle call) {
    this.tool = tool;
    this.args = args == null ? Map.of() : args;
    this.call = call;
    for (String name : this.args.keySet()) {
      if (!known.contains(name)) {
        throw PysandboxException.invalid(
            tool
                + ": unknown argument '"
                + name
                + "' ("
                + (known.isEmpty()
                    ? tool + " takes no arguments"
                    : "accepted: " + String.join(", ", known.stream().sorted().toList()))
                + ")");
      }
    }
  }

  /** Runs {@code action} if the client cancels this call (not at all when it cannot). */
  void whenCancelled(Runnable action) {
    if (call != null) {
      call.whenCancelled(action);
    }
  }

  String requiredString(String name) {
    String v = string(name);
    if (v == null) {
      throw PysandboxException.invalid(tool + ": argument '" + name + "' is required");
    }
    return v;
  }

  String string(String name) {
    Object v = args.get(name);
    if (v == null) {
      return null;
    }
    if (!(v instanceof String s)) {
      throw PysandboxException.invalid(
          tool + ": argument '" + name + "' must be a string, got " + typeName(v));
    }
    return s;
  }

  Integer integer(String name) {
    Object v = args.get(name);
    if (v == null) {
      return null;
    }
    if (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
      double d = n.doubleValue();
      if (d < Integer.MIN_VALUE || d > Integer.MAX_VALUE) {
        throw PysandboxException.invalid(tool + ": argument '" + name + "' is out of range: " + v);
      }
      return (int) d;
    }
    throw PysandboxException.invalid(
        tool + ": argument '" + name + "' must be a whole number, got " + typeName(v));
  }

  Double number(String name) {
    Object v = args.get(name);
    if (v == null) {
      return null;
    }
    if (v instanceof Number n && Double.isFinite(n.doubleValue())) {
      return n.doubleValue();
    }
    throw PysandboxException.invalid(
        tool + ": argument '" + name + "' must be a number, got " + typeName(v));
  }

  int integer(String name, int defaultValue) {
    Integer v = integer(name);
    return v == null ? defaultValue : v;
  }

  boolean bool(String name, boolean defaultValue) {
    Object v = args.get(name);
    if (v == null) {
      return defaultValue;
    }
    if (!(v instanceof Boolean b)) {
      throw PysandboxException.invalid(
          tool + ": argument '" + name + "' must be true or false, got " + typeName(v));
    }
    return b;
  }

  long longValue(String name, long defaultValue) {
    Object v = args.get(name);
    if (v == null) {
      return defaultValue;
    }
    if (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
      return n.longValue();
    }
    throw PysandboxException.invalid(
        tool + ": argument '" + name + "' must be a whole number, got " + typeName(v));
  }

  /** A list of strings, or {@code null} when absent. */
  java.util.List<String> strings(String name) {
    Object v = args.get(name);
    if (v == null) {
      return null;
    }
    if (v instanceof java.util.List<?> list) {
      java.util.List<String> out = new java.util.ArrayList<>();
      for (Object o : list) {
        if (!(o instanceof String s)) {
          throw PysandboxException.invalid(
              tool + ": argument '" + name + "' must be a list of strings");
        }
        out.add(s);
      }
      return out;
    }
    throw PysandboxException.invalid(
        tool + ": argument '" + name + "' must be a list of strings, got " + typeName(v));
  }

  /** A JSON object, or {@code null} when absent. */
  @SuppressWarnings("unchecked")
  Map<String, Object> object(String name) {
    Object v = args.get(name);
    if (v == null) {
      return null;
    }
    if (v instanceof Map<?, ?> m) {
      return (Map<String, Object>) m;
    }
    throw PysandboxException.invalid(
        tool + ": argument '" + name + "' must be a JSON object, got " + typeName(v));
  }

  private static String typeName(Object v) {
    if (v instanceof Number) {
      return "a number";
    }
    if (v instanceof Boolean) {
      return "a boolean";
    }
    if (v instanceof Map) {
      return "an object";
    }
    if (v instanceof java.util.List) {
      return "an array";
    }
    if (v instanceof String) {
      return "a string";
    }
    return "something else";
  }
}

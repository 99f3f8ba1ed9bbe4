package dev.pysandbox.api.op;

import dev.pysandbox.api.PysandboxException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A call's arguments, parsed against its {@link Operation}: every name is declared, every value has
 * its declared JSON kind, required ones are present, and absent ones carry their applied default.
 * This is the one parser of JSON arguments (MCP today, REST next); it checks their shape, and the
 * request values built from them check the rules (see DESIGN.md, "Operations are declared once").
 *
 * <p>The getters name the argument; asking for one the operation does not declare, or as another
 * kind, is a bug in the face and fails with {@link IllegalArgumentException}.
 */
public final class Arguments {
  private final Operation operation;
  private final Map<String, Object> values;

  private Arguments(Operation operation, Map<String, Object> values) {
    this.operation = operation;
    this.values = values;
  }

  static Arguments parse(Operation op, Map<String, Object> arguments) {
    Map<String, Object> given = arguments == null ? Map.of() : arguments;
    for (String name : given.keySet()) {
      if (op.param(name) == null) {
        TreeSet<String> known = new TreeSet<>();
        op.params().forEach(p -> known.add(p.name()));
        throw PysandboxException.invalid(
            op.name()
                + ": unknown argument '"
                + name
                + "' ("
                + (known.isEmpty()
                    ? op.name() + " takes no arguments"
                    : "accepted: " + String.join(", ", known))
                + ")");
      }
    }
    Map<String, Object> values = new HashMap<>();
    for (Param p : op.params()) {
      Object v = given.get(p.name());
      if (v == null) {
        if (p.isRequired()) {
          throw PysandboxException.invalid(op.name() + ": argument '" + p.name() + "' is required");
        }
        if (p.defaultApplied()) {
          values.put(p.name(), p.defaultValue());
        }
        continue;
      }
      values.put(p.name(), convert(op, p, v));
    }
    return new Arguments(op, Collections.unmodifiableMap(values));
  }

  private static Object convert(Operation op, Param p, Object v) {
    String what = op.name() + ": argument '" + p.name() + "'";
    switch (p.kind()) {
      case STRING -> {
        if (!(v instanceof String s)) {
          throw PysandboxException.invalid(what + " must be a string, got " + typeName(v));
        }
        if (!p.allowed().isEmpty() && !p.allowed().contains(s)) {
          throw PysandboxException.invalid(
              op.name()
                  + ": unknown "
                  + p.name()
                  + " '"
                  + s
                  + "' (one of "
                  + String.join(", ", p.allowed())
                  + ")");
        }
        return s;
      }
      case INTEGER -> {
        if (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
          double d = n.doubleValue();
          if (d < Integer.MIN_VALUE || d > Integer.MAX_VALUE) {
            throw PysandboxException.invalid(what + " is out of range: " + v);
          }
          return (int) d;
        }
        throw PysandboxException.invalid(what + " must be a whole number, got " + typeName(v));
      }
      case LONG -> {
        if (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
          return n.longValue();
        }
        throw PysandboxException.invalid(what + " must be a whole number, got " + typeName(v));
      }
      case NUMBER -> {
        if (v instanceof Number n && Double.isFinite(n.doubleValue())) {
          return n.doubleValue();
        }
        throw PysandboxException.invalid(what + " must be a number, got " + typeName(v));
      }
      case BOOLEAN -> {
        if (v instanceof Boolean b) {
          return b;
        }
        throw PysandboxException.invalid(what + " must be true or false, got " + typeName(v));
      }
      case OBJECT -> {
        if (v instanceof Map<?, ?> m) {
          return m; // a JSON object's keys are strings
        }
        throw PysandboxException.invalid(what + " must be a JSON object, got " + typeName(v));
      }
      case STRING_LIST -> {
        if (v instanceof List<?> list) {
          List<String> out = new ArrayList<>();
          for (Object o : list) {
            if (!(o instanceof String s)) {
              throw PysandboxException.invalid(what + " must be a list of strings");
            }
            out.add(s);
          }
          return out;
        }
        throw PysandboxException.invalid(what + " must be a list of strings, got " + typeName(v));
      }
      default -> throw new IllegalStateException("unhandled kind " + p.kind());
    }
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
    if (v instanceof List) {
      return "an array";
    }
    if (v instanceof String) {
      return "a string";
    }
    return "something else";
  }

  /** The operation these arguments are for. */
  public Operation operation() {
    return operation;
  }

  /** A {@link Param.Kind#STRING} argument, or {@code null} when absent. */
  public String string(String name) {
    return get(name, Param.Kind.STRING, String.class);
  }

  /** A {@link Param.Kind#INTEGER} argument, or {@code null} when absent without a default. */
  public Integer integer(String name) {
    return get(name, Param.Kind.INTEGER, Integer.class);
  }

  /** A {@link Param.Kind#LONG} argument, or {@code null} when absent without a default. */
  public Long longInteger(String name) {
    return get(name, Param.Kind.LONG, Long.class);
  }

  /** A {@link Param.Kind#NUMBER} argument, or {@code null} when absent without a default. */
  public Double number(String name) {
    return get(name, Param.Kind.NUMBER, Double.class);
  }

  /** A {@link Param.Kind#BOOLEAN} argument, or {@code null} when absent without a default. */
  public Boolean bool(String name) {
    return get(name, Param.Kind.BOOLEAN, Boolean.class);
  }

  /** A {@link Param.Kind#STRING_LIST} argument, or {@code null} when absent. */
  @SuppressWarnings("unchecked")
  public List<String> strings(String name) {
    return get(name, Param.Kind.STRING_LIST, List.class);
  }

  /** A {@link Param.Kind#OBJECT} argument, or {@code null} when absent. */
  @SuppressWarnings("unchecked")
  public Map<String, Object> object(String name) {
    return get(name, Param.Kind.OBJECT, Map.class);
  }

  private <T> T get(String name, Param.Kind kind, Class<T> type) {
    Param p = operation.param(name);
    if (p == null || p.kind() != kind) {
      throw new IllegalArgumentException(
          operation.name()
              + " declares "
              + (p == null ? "no argument '" + name + "'" : "'" + name + "' as " + p.kind())
              + ", asked for as "
              + kind);
    }
    return type.cast(values.get(name));
  }
}

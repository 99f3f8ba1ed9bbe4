package dev.pysandbox.http.rest;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.Param;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A query string as JSON arguments for {@link Operation#parse}: each value converted to its
 * parameter's JSON kind first (a whole number for an integer, {@code true}/{@code false} for a
 * boolean, a comma-separated list for a list of strings), so that the one parser then checks them
 * as it checks MCP's. The query string is read here, not by the servlet container, which would also
 * read a form body.
 */
final class QueryArguments {
  private static final Pattern WHOLE = Pattern.compile("-?[0-9]{1,18}");
  private static final Pattern NUMBER =
      Pattern.compile("-?[0-9]{1,300}(\\.[0-9]{1,300})?([eE][+-]?[0-9]{1,3})?");

  private QueryArguments() {}

  /** The query's names and values, decoded ({@code +} is a space), in order. */
  static Map<String, List<String>> parse(String rawQuery) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return out;
    }
    for (String pair : rawQuery.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = PercentDecoding.decode(eq < 0 ? pair : pair.substring(0, eq), true);
      String value = eq < 0 ? "" : PercentDecoding.decode(pair.substring(eq + 1), true);
      out.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    return out;
  }

  /**
   * The query's values, converted to their parameters' kinds; a name {@code op} does not declare is
   * passed on as text, for the parser to refuse with the names it accepts.
   *
   * @throws PysandboxException {@code invalid_argument} naming the argument
   */
  static Map<String, Object> convert(Operation op, Map<String, List<String>> query) {
    Map<String, Object> out = new LinkedHashMap<>();
    query.forEach(
        (name, values) -> {
          Param p = op.param(name);
          if (p != null && p.kind() == Param.Kind.STRING_LIST) {
            List<String> items = new ArrayList<>();
            for (String v : values) {
              for (String item : v.split(",", -1)) {
                if (!item.isEmpty()) {
                  items.add(item);
                }
              }
            }
            out.put(name, items);
            return;
          }
          if (values.size() > 1) {
            throw PysandboxException.invalid(
                op.name() + ": argument '" + name + "' is given " + values.size() + " times");
          }
          out.put(name, p == null ? values.get(0) : convert(op, p, values.get(0)));
        });
    return out;
  }

  private static Object convert(Operation op, Param p, String v) {
    String what = op.name() + ": argument '" + p.name() + "'";
    return switch (p.kind()) {
      case STRING -> v;
      case INTEGER, LONG -> {
        if (WHOLE.matcher(v).matches()) {
          yield Long.parseLong(v);
        }
        if (v.matches("-?[0-9]+")) {
          throw PysandboxException.invalid(what + " is out of range: " + v);
        }
        throw PysandboxException.invalid(
            what + " must be a whole number, got " + PysandboxException.quote(v));
      }
      case NUMBER -> {
        if (NUMBER.matcher(v).matches()) {
          yield Double.parseDouble(v);
        }
        throw PysandboxException.invalid(
            what + " must be a number, got " + PysandboxException.quote(v));
      }
      case BOOLEAN -> {
        if (v.equals("true") || v.equals("false")) {
          yield Boolean.parseBoolean(v);
        }
        throw PysandboxException.invalid(
            what + " must be true or false, got " + PysandboxException.quote(v));
      }
      case OBJECT, STRING_LIST ->
          throw PysandboxException.invalid(
              what + " is a JSON " + p.kind().jsonType() + " and cannot be given in the query");
    };
  }
}

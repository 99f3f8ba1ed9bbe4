package dev.pysandbox.api.op;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON Schema of an operation's arguments, derived from its declaration: an object of the
 * declared properties, the required ones listed, nothing else admitted. MCP sends it as a tool's
 * {@code inputSchema}; an OpenAPI document will take each property's schema from {@link
 * #of(Param)}.
 */
public final class InputSchema {
  private InputSchema() {}

  /** The schema of {@code op}'s arguments, as maps and lists ready to be written as JSON. */
  public static Map<String, Object> of(Operation op) {
    return object(op.params());
  }

  /** The schema of an object of these arguments (a REST body of some of an operation's). */
  public static Map<String, Object> object(List<Param> params) {
    Map<String, Object> properties = new LinkedHashMap<>();
    List<String> required = new ArrayList<>();
    for (Param p : params) {
      properties.put(p.name(), of(p));
      if (p.isRequired()) {
        required.add(p.name());
      }
    }
    Map<String, Object> schema = new LinkedHashMap<>();
    schema.put("type", "object");
    schema.put("properties", properties);
    if (!required.isEmpty()) {
      schema.put("required", required);
    }
    schema.put("additionalProperties", false);
    return schema;
  }

  /** The schema of one argument. */
  public static Map<String, Object> of(Param p) {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("type", p.kind().jsonType());
    if (p.kind() == Param.Kind.STRING_LIST) {
      s.put("items", Map.of("type", "string"));
    }
    putIfSet(s, "minLength", p.minLength());
    putIfSet(s, "maxLength", p.maxLength());
    if (p.pattern() != null) {
      s.put("pattern", "^" + p.pattern() + "$");
    }
    putIfSet(s, "minimum", p.minimum());
    putIfSet(s, "maximum", p.maximum());
    putIfSet(s, "default", p.defaultValue());
    if (!p.allowed().isEmpty()) {
      s.put("enum", p.allowed());
    }
    s.put("description", p.description());
    return s;
  }

  private static void putIfSet(Map<String, Object> s, String key, Object value) {
    if (value != null) {
      s.put(key, value);
    }
  }
}

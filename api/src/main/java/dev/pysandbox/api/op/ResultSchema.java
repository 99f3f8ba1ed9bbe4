package dev.pysandbox.api.op;

import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import dev.pysandbox.api.Json;
import java.time.temporal.Temporal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON Schema of an operation's result, derived from the record it is written from, with the
 * names and types Jackson writes ({@link Json#mapper()}), so that the two cannot drift apart. MCP
 * sends it as a tool's {@code outputSchema} (with the error shape besides); the OpenAPI document
 * uses it for response bodies.
 */
public final class ResultSchema {
  private ResultSchema() {}

  /**
   * An object of {@code type}'s properties, each with its JSON type (nullable unless primitive),
   * every one listed as required (a value written always has them all) except those written only
   * when they have a value ({@code @JsonInclude(NON_NULL)}: what a call adds when asked).
   */
  public static Map<String, Object> of(Class<?> type) {
    JavaType javaType = Json.mapper().constructType(type);
    BeanDescription bean = Json.mapper().getSerializationConfig().introspect(javaType);
    Map<String, Object> properties = new LinkedHashMap<>();
    List<String> required = new ArrayList<>();
    for (BeanPropertyDefinition p : bean.findProperties()) {
      if (!p.couldSerialize()) {
        continue;
      }
      properties.put(p.getName(), Map.of("type", jsonType(p.getRawPrimaryType())));
      if (p.findInclusion().getValueInclusion()
          != com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) {
        required.add(p.getName());
      }
    }
    Map<String, Object> schema = new LinkedHashMap<>();
    schema.put("type", "object");
    schema.put("properties", properties);
    schema.put("required", required);
    return schema;
  }

  /** The JSON types a Java type is written as; nullable unless primitive. */
  private static Object jsonType(Class<?> c) {
    String t;
    if (c == String.class || c.isEnum() || Temporal.class.isAssignableFrom(c)) {
      t = "string";
    } else if (c == int.class
        || c == long.class
        || c == short.class
        || c == Integer.class
        || c == Long.class
        || c == Short.class) {
      t = "integer";
    } else if (c == double.class || c == float.class || Number.class.isAssignableFrom(c)) {
      t = "number";
    } else if (c == boolean.class || c == Boolean.class) {
      t = "boolean";
    } else if (c.isArray() || Collection.class.isAssignableFrom(c)) {
      t = "array";
    } else {
      t = "object";
    }
    return c.isPrimitive() ? t : List.of(t, "null");
  }
}

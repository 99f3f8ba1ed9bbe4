package dev.pysandbox.mcp;

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
 * A tool's {@code outputSchema}, derived from the record its {@code structuredContent} is made of,
 * with the names and types Jackson writes (so the two cannot drift apart). Every schema also admits
 * the error shape {@code {"error": {"code", "message", "retryable"}}}: clients validate
 * structuredContent against the schema on errors too.
 */
final class OutputSchemas {
  private OutputSchemas() {}

  static final Map<String, Object> ERROR =
      Map.of(
          "type",
          "object",
          "properties",
          Map.of(
              "code", Map.of("type", "string", "description", "One of the closed set of codes."),
              "message", Map.of("type", "string"),
              "retryable", Map.of("type", "boolean")),
          "required",
          List.of("code", "message"));

  /** The schema of {@code type}'s JSON, or of the error shape. */
  static Map<String, Object> of(Class<?> type) {
    JavaType javaType = Json.mapper().constructType(type);
    BeanDescription bean = Json.mapper().getSerializationConfig().introspect(javaType);
    Map<String, Object> properties = new LinkedHashMap<>();
    List<String> required = new ArrayList<>();
    for (BeanPropertyDefinition p : bean.findProperties()) {
      if (!p.couldSerialize()) {
        continue;
      }
      properties.put(p.getName(), Map.of("type", jsonType(p.getRawPrimaryType())));
      required.add(p.getName());
    }
    // A run has an "error" of its own (the code's exception): both shapes are objects.
    properties.putIfAbsent("error", Map.of("type", List.of("object", "null")));
    Map<String, Object> schema = new LinkedHashMap<>();
    schema.put("type", "object");
    schema.put("properties", properties);
    schema.put(
        "anyOf",
        List.of(
            Map.of("required", required),
            Map.of("required", List.of("error"), "properties", Map.of("error", ERROR))));
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

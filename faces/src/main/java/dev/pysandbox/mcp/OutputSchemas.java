package dev.pysandbox.mcp;

import dev.pysandbox.api.op.ResultSchema;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A tool's {@code outputSchema}: the schema of the record its {@code structuredContent} is made of
 * ({@link ResultSchema}), which also admits the error shape {@code {"error": {"code", "message",
 * "retryable"}}}: clients validate structuredContent against the schema on errors too.
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
  @SuppressWarnings("unchecked")
  static Map<String, Object> of(Class<?> type) {
    Map<String, Object> result = ResultSchema.of(type);
    Map<String, Object> properties =
        new LinkedHashMap<>((Map<String, Object>) result.get("properties"));
    // A run has an "error" of its own (the code's exception): both shapes are objects.
    properties.putIfAbsent("error", Map.of("type", List.of("object", "null")));
    Map<String, Object> schema = new LinkedHashMap<>();
    schema.put("type", "object");
    schema.put("properties", properties);
    schema.put(
        "anyOf",
        List.of(
            Map.of("required", result.get("required")),
            Map.of("required", List.of("error"), "properties", Map.of("error", ERROR))));
    return schema;
  }
}

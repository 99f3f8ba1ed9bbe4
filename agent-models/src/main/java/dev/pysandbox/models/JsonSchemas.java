package dev.pysandbox.models;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.model.chat.request.json.JsonAnyOfSchema;
import dev.langchain4j.model.chat.request.json.JsonArraySchema;
import dev.langchain4j.model.chat.request.json.JsonBooleanSchema;
import dev.langchain4j.model.chat.request.json.JsonEnumSchema;
import dev.langchain4j.model.chat.request.json.JsonIntegerSchema;
import dev.langchain4j.model.chat.request.json.JsonNullSchema;
import dev.langchain4j.model.chat.request.json.JsonNumberSchema;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonRawSchema;
import dev.langchain4j.model.chat.request.json.JsonSchemaElement;
import dev.langchain4j.model.chat.request.json.JsonStringSchema;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A JSON schema as a map ({@link dev.pysandbox.api.agent.ToolSpec#parameters()}) to LangChain4j's
 * schema elements. The common keywords map to their element; a part the elements cannot say
 * (several types, oneOf, a missing type) is passed as it is ({@link JsonRawSchema}).
 */
final class JsonSchemas {
  private static final ObjectMapper JSON = new ObjectMapper();

  private JsonSchemas() {}

  /** The parameters of a tool: an object schema; null or empty means no parameters. */
  static JsonObjectSchema parameters(Map<String, Object> schema) {
    if (schema == null || schema.isEmpty()) {
      return JsonObjectSchema.builder().build();
    }
    Object type = schema.get("type");
    if (type != null && !"object".equals(type)) {
      throw new IllegalArgumentException(
          "a tool's parameters must be a JSON schema of type object, not " + type);
    }
    return object(schema);
  }

  static JsonSchemaElement element(Object node) {
    if (!(node instanceof Map<?, ?> raw)) {
      return raw(node == null ? Map.of() : node); // true/false schemas
    }
    Map<String, Object> schema = stringKeys(raw);
    String description = schema.get("description") instanceof String s ? s : null;
    Object type = schema.get("type");
    if (schema.get("anyOf") instanceof List<?> anyOf && type == null) {
      return JsonAnyOfSchema.builder()
          .description(description)
          .anyOf(anyOf.stream().map(JsonSchemas::element).toList())
          .build();
    }
    if (schema.get("enum") instanceof List<?> values
        && (type == null || "string".equals(type))
        && values.stream().allMatch(v -> v instanceof String)) {
      return JsonEnumSchema.builder()
          .description(description)
          .enumValues(values.stream().map(String.class::cast).toList())
          .build();
    }
    if (!(type instanceof String t) || schema.containsKey("oneOf")) {
      return raw(schema);
    }
    return switch (t) {
      case "object" -> object(schema);
      case "array" ->
          JsonArraySchema.builder()
              .description(description)
              .items(schema.containsKey("items") ? element(schema.get("items")) : null)
              .build();
      case "string" -> JsonStringSchema.builder().description(description).build();
      case "integer" -> JsonIntegerSchema.builder().description(description).build();
      case "number" -> JsonNumberSchema.builder().description(description).build();
      case "boolean" -> JsonBooleanSchema.builder().description(description).build();
      case "null" -> new JsonNullSchema();
      default -> raw(schema);
    };
  }

  private static JsonObjectSchema object(Map<String, Object> schema) {
    JsonObjectSchema.Builder b = JsonObjectSchema.builder();
    if (schema.get("description") instanceof String s) {
      b.description(s);
    }
    if (schema.get("properties") instanceof Map<?, ?> properties) {
      Map<String, JsonSchemaElement> converted = new LinkedHashMap<>();
      stringKeys(properties).forEach((name, sub) -> converted.put(name, element(sub)));
      b.addProperties(converted);
    }
    if (schema.get("required") instanceof List<?> required) {
      b.required(required.stream().map(String::valueOf).toList());
    }
    if (schema.get("additionalProperties") instanceof Boolean additional) {
      b.additionalProperties(additional);
    }
    return b.build();
  }

  private static JsonRawSchema raw(Object schema) {
    try {
      return JsonRawSchema.builder().schema(JSON.writeValueAsString(schema)).build();
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("a tool's schema cannot be written as JSON", e);
    }
  }

  private static Map<String, Object> stringKeys(Map<?, ?> map) {
    Map<String, Object> out = new LinkedHashMap<>();
    map.forEach((k, v) -> out.put(String.valueOf(k), v));
    return out;
  }
}

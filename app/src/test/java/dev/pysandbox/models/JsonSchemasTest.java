package dev.pysandbox.models;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.internal.JsonSchemaElementUtils;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.pysandbox.Fast;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A tool's parameters, a JSON schema as a map, through LangChain4j's elements and back. */
@Fast
class JsonSchemasTest {
  @Test
  void parameters_commonKeywords_surviveTheRoundTrip() {
    Map<String, Object> schema =
        Map.of(
            "type",
            "object",
            "properties",
            Map.of(
                "code", Map.of("type", "string", "description", "Python"),
                "limit", Map.of("type", "integer"),
                "ratio", Map.of("type", "number"),
                "quiet", Map.of("type", "boolean"),
                "mode", Map.of("type", "string", "enum", List.of("fast", "slow")),
                "paths", Map.of("type", "array", "items", Map.of("type", "string")),
                "either",
                    Map.of("anyOf", List.of(Map.of("type", "string"), Map.of("type", "null"))),
                "odd", Map.of("type", List.of("string", "integer"))),
            "required",
            List.of("code"),
            "additionalProperties",
            false);

    JsonObjectSchema converted = JsonSchemas.parameters(schema);
    Map<String, Object> back = JsonSchemaElementUtils.toMap(converted);

    assertThat(back).containsEntry("type", "object").containsEntry("required", List.of("code"));
    @SuppressWarnings("unchecked")
    Map<String, Map<String, Object>> props =
        (Map<String, Map<String, Object>>) back.get("properties");
    assertThat(props.get("code"))
        .containsEntry("type", "string")
        .containsEntry("description", "Python");
    assertThat(props.get("limit")).containsEntry("type", "integer");
    assertThat(props.get("ratio")).containsEntry("type", "number");
    assertThat(props.get("quiet")).containsEntry("type", "boolean");
    assertThat(props.get("mode")).containsEntry("enum", List.of("fast", "slow"));
    assertThat(props.get("paths")).containsEntry("items", Map.of("type", "string"));
    assertThat(props.get("either")).containsKey("anyOf");
    assertThat(props.get("odd"))
        .as("passed as written")
        .containsEntry("type", List.of("string", "integer"));
    assertThat(converted.additionalProperties()).isFalse();
  }

  @Test
  void parameters_emptyOrNull_isAnObjectWithoutProperties() {
    assertThat(JsonSchemas.parameters(null).properties()).isEmpty();
    assertThat(JsonSchemas.parameters(Map.of()).properties()).isEmpty();
  }

  @Test
  void parameters_notAnObject_isRefused() {
    assertThatThrownBy(() -> JsonSchemas.parameters(Map.of("type", "string")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("object");
  }
}

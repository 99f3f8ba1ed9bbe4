package dev.pysandbox.api.op;

import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import dev.pysandbox.api.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.temporal.Temporal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON Schema of an operation's result, derived from the record it is written from, with the
 * names and types Jackson writes ({@link Json#mapper()}), so that the two cannot drift apart. MCP
 * sends it as a tool's {@code outputSchema} (with the error shape besides); the OpenAPI document
 * uses it for response bodies.
 *
 * <p>Deriving them takes Jackson's introspection of every result record, about 0.3 s of a server's
 * start: the build derives the schemas of the operations' results once ({@link #main}, in the api
 * module's {@code process-classes} phase) into {@value #FILE}, which {@link #of} reads; a type not
 * in it (or a build without it, such as an IDE's) is derived as before. A test holds the file equal
 * to what deriving gives.
 */
public final class ResultSchema {
  /** The resource of the derived schemas, by the class name of the result. */
  static final String FILE = "dev/pysandbox/api/op/result-schemas.json";

  private ResultSchema() {}

  /** The schemas the build derived, read once, or an empty map without the file. */
  private static final class Built {
    static final Map<String, Map<String, Object>> SCHEMAS = read();

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> read() {
      try (InputStream in = ResultSchema.class.getClassLoader().getResourceAsStream(FILE)) {
        if (in == null) {
          return Map.of();
        }
        Map<String, Map<String, Object>> all = new LinkedHashMap<>();
        Json.mapper()
            .readValue(in, LinkedHashMap.class)
            .forEach((k, v) -> all.put((String) k, (Map<String, Object>) frozen(v)));
        return Collections.unmodifiableMap(all);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + FILE, e);
      }
    }
  }

  /**
   * An object of {@code type}'s properties, each with its JSON type (nullable unless primitive),
   * every one listed as required (a value written always has them all) except those written only
   * when they have a value ({@code @JsonInclude(NON_NULL)}: what a call adds when asked).
   * Unmodifiable.
   */
  public static Map<String, Object> of(Class<?> type) {
    Map<String, Object> built = Built.SCHEMAS.get(type.getName());
    return built != null ? built : derive(type);
  }

  /**
   * Writes {@value #FILE} under the directory {@code args[0]} (the build's classes): the schema of
   * every operation's result.
   */
  public static void main(String[] args) throws IOException {
    Map<String, Object> all = new java.util.TreeMap<>();
    for (Operation op : Operations.ALL) {
      all.put(op.result().getName(), derive(op.result()));
    }
    java.nio.file.Path file = java.nio.file.Path.of(args[0]).resolve(FILE);
    java.nio.file.Files.createDirectories(file.getParent());
    java.nio.file.Files.writeString(file, Json.write(all));
  }

  /** {@link #of}, derived from the record now. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> derive(Class<?> type) {
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
    return (Map<String, Object>) frozen(schema);
  }

  /** A copy of a JSON value whose maps (in their order) and lists cannot be changed. */
  @SuppressWarnings("unchecked")
  private static Object frozen(Object value) {
    if (value instanceof Map<?, ?> m) {
      Map<String, Object> copy = new LinkedHashMap<>();
      m.forEach((k, v) -> copy.put((String) k, frozen(v)));
      return Collections.unmodifiableMap(copy);
    }
    if (value instanceof List<?> l) {
      List<Object> copy = new ArrayList<>();
      l.forEach(v -> copy.add(frozen(v)));
      return Collections.unmodifiableList(copy);
    }
    return value;
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

package dev.pysandbox.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.Map;

/**
 * The one place JSON is configured. {@link #mapper()} is the form of every pysandbox value, on the
 * wire and in the store: snake_case names, nulls kept, ISO instants as text, unknown fields
 * ignored. {@link #protocolMapper} reads and writes the envelopes of protocols whose names are
 * fixed by others (MCP's JSON-RPC: {@code protocolVersion}, {@code isError}), so it keeps names as
 * declared; it bounds a string to the largest message the connection accepts.
 */
public final class Json {
  private static final ObjectMapper MAPPER =
      new ObjectMapper()
          .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
          .configure(SerializationFeature.FAIL_ON_EMPTY_BEANS, false);

  private Json() {}

  /**
   * A mapper for a protocol's own envelopes: names as the protocol's types declare them, strings up
   * to {@code maxStringLength} characters (Jackson's default is 20 M).
   */
  public static ObjectMapper protocolMapper(int maxStringLength) {
    return new ObjectMapper(
        JsonFactory.builder()
            .streamReadConstraints(
                StreamReadConstraints.builder().maxStringLength(maxStringLength).build())
            .build());
  }

  /** The shared mapper (thread-safe; do not reconfigure). */
  public static ObjectMapper mapper() {
    return MAPPER;
  }

  /** A record or map as a JSON object, with snake_case names. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> toMap(Object value) {
    return MAPPER.convertValue(value, Map.class);
  }

  public static String write(Object value) {
    try {
      return MAPPER.writeValueAsString(value);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  public static String writePretty(Object value) {
    try {
      return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(value);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}

package dev.pysandbox.http.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;

/**
 * Reads a JSON request body: only as {@code application/json}, at most {@code limit} bytes (a
 * declared length over it is refused before a byte is read), one JSON value with no duplicate keys
 * and nothing after it. An empty body is no body.
 */
final class JsonBodies {
  private static final ObjectReader READER =
      Json.mapper()
          .readerFor(Object.class)
          .with(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private JsonBodies() {}

  /**
   * @return the value (a map for an object), or {@code null} for an empty body
   * @throws PysandboxException {@code unsupported_media_type}, {@code payload_too_large}, {@code
   *     invalid_argument} for text that is not JSON
   */
  static Object read(HttpServletRequest request, long limit) throws IOException {
    long declared = request.getContentLengthLong();
    if (declared == 0) {
      return null;
    }
    String type = request.getContentType();
    if (type != null && !isJson(type)) {
      throw notJson(type);
    }
    if (declared > limit) {
      throw tooLarge(limit);
    }
    byte[] body;
    try (InputStream in = request.getInputStream()) {
      body = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
    }
    if (body.length > limit) {
      throw tooLarge(limit);
    }
    if (body.length == 0) {
      return null;
    }
    if (type == null) {
      throw notJson(null);
    }
    try {
      return READER.readValue(body);
    } catch (JsonProcessingException e) {
      throw PysandboxException.invalid("the body is not valid JSON: " + e.getOriginalMessage());
    }
  }

  static boolean isJson(String contentType) {
    String base = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    return base.equals("application/json");
  }

  private static PysandboxException notJson(String type) {
    return new PysandboxException(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        "send the body as Content-Type: application/json"
            + (type == null ? " (none was given)" : ", not " + PysandboxException.quote(type)));
  }

  private static PysandboxException tooLarge(long limit) {
    return new PysandboxException(
        ErrorCode.PAYLOAD_TOO_LARGE,
        "the JSON body is over " + limit + " bytes (code_max_bytes + 1 MiB)");
  }
}

package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one error body of the HTTP face, {@code {"error": {"code", "message", "retryable"}}} (the
 * shape of MCP's error results), for the REST routes and for the server's own refusals alike; the
 * status is the code's {@link ErrorCode#httpStatus()} unless a route has a more exact one (416).
 */
public final class ErrorBodies {
  private ErrorBodies() {}

  /** The body, as JSON text. */
  public static String json(ErrorCode code, String message) {
    Map<String, Object> error = new LinkedHashMap<>();
    error.put("code", code.wireName());
    error.put("message", message);
    error.put("retryable", code.retryable());
    return Json.write(Map.of("error", error));
  }

  /** Answers with the code's status and the error body (nothing, if the answer has begun). */
  public static void write(HttpServletResponse response, ErrorCode code, String message)
      throws IOException {
    write(response, code.httpStatus(), code, message);
  }

  /**
   * Answers with {@code status} and the error body of {@code code}; headers already set (Allow,
   * WWW-Authenticate, Content-Range) are kept. Does nothing once the answer is committed.
   */
  public static void write(HttpServletResponse response, int status, ErrorCode code, String message)
      throws IOException {
    if (response.isCommitted()) {
      return;
    }
    response.resetBuffer();
    byte[] body = json(code, message).getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.setHeader("Cache-Control", "no-store");
    response.setHeader("Content-Disposition", null);
    response.setHeader("ETag", null);
    response.setContentType("application/json");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }
}

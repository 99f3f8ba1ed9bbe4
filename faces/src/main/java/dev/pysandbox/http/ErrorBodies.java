package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one error shape of every HTTP answer, ours and the container's: {@code {"error": {"code",
 * "message", "retryable"}}} with the code's HTTP status (the shape the MCP tools use for theirs). A
 * servlet mounted on the HTTP face answers its errors with {@link #send}.
 */
public final class ErrorBodies {
  /** The content type of every JSON answer. */
  public static final String JSON_UTF8 = "application/json;charset=utf-8";

  private ErrorBodies() {}

  /** The body, e.g. {@code {"error":{"code":"not_found","message":"...","retryable":false}}}. */
  public static String json(ErrorCode code, String message) {
    return json(code, message, code.retryable());
  }

  /** The body, with whether retrying may succeed as the failure itself says. */
  public static String json(ErrorCode code, String message, boolean retryable) {
    Map<String, Object> error = new LinkedHashMap<>();
    error.put("code", code.wireName());
    error.put("message", message);
    error.put("retryable", retryable);
    return Json.write(Map.of("error", error));
  }

  /**
   * The body for a status the container (or a servlet's {@code sendError}) chose; a server error
   * never shows its cause, which is logged instead.
   */
  static String forStatus(int status, String message) {
    ErrorCode code = codeFor(status);
    String shown =
        status >= 500 && status != 503
            ? "the server failed to answer (a bug; the server's log has the details)"
            : message == null || message.isBlank() ? reason(status) : message;
    return json(code, shown);
  }

  /** Writes {@code e} as an error answer, unless the response is already under way. */
  public static void send(HttpServletResponse response, PysandboxException e) throws IOException {
    send(response, e.code().httpStatus(), e.code(), e.getMessage(), e.retryable());
  }

  /**
   * Writes an error answer with the code's status, unless the response is already under way (its
   * headers so far are kept, its body so far dropped).
   */
  public static void send(HttpServletResponse response, ErrorCode code, String message)
      throws IOException {
    send(response, code.httpStatus(), code, message);
  }

  /**
   * Writes an error answer with {@code status} (when a route has a more exact one than the code's,
   * such as 416) and the error body of {@code code}; headers already set (Allow, WWW-Authenticate,
   * Content-Range) are kept, those of a download that did not happen (ETag, Content-Disposition)
   * dropped. Does nothing once the answer is committed.
   */
  public static void send(HttpServletResponse response, int status, ErrorCode code, String message)
      throws IOException {
    send(response, status, code, message, code.retryable());
  }

  private static void send(
      HttpServletResponse response, int status, ErrorCode code, String message, boolean retryable)
      throws IOException {
    if (response.isCommitted()) {
      return;
    }
    response.resetBuffer();
    response.setStatus(status);
    response.setHeader("Cache-Control", "no-store");
    response.setHeader("Content-Disposition", null);
    response.setHeader("ETag", null);
    response.setContentType(JSON_UTF8);
    byte[] body = json(code, message, retryable).getBytes(StandardCharsets.UTF_8);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  /**
   * Bytes of a refused request's body the server reads and drops before it answers, so that a
   * client still sending the body gets the answer instead of a connection reset racing it; a longer
   * body is not read, and its connection is closed after the answer.
   */
  public static final long DRAIN_MAX_BYTES = 4L << 20;

  /**
   * Reads and drops what is left of the request's body when it is at most {@link #DRAIN_MAX_BYTES}
   * (as declared, or as found), else marks the connection to be closed after the answer. Call
   * before answering a request whose body was refused unread.
   */
  public static void drainBody(HttpServletRequest request, HttpServletResponse response) {
    long declared = request.getContentLengthLong();
    if (declared > DRAIN_MAX_BYTES) {
      response.setHeader("Connection", "close");
      return;
    }
    try {
      InputStream in = request.getInputStream();
      byte[] sink = new byte[16384];
      long left = DRAIN_MAX_BYTES;
      int n;
      while (left > 0 && (n = in.read(sink, 0, (int) Math.min(sink.length, left))) > 0) {
        left -= n;
      }
      if (left <= 0) {
        response.setHeader("Connection", "close");
      }
    } catch (IOException | IllegalStateException e) {
      response.setHeader("Connection", "close");
    }
  }

  static ErrorCode codeFor(int status) {
    return switch (status) {
      case 401 -> ErrorCode.UNAUTHENTICATED;
      case 403 -> ErrorCode.FORBIDDEN;
      case 404, 410 -> ErrorCode.NOT_FOUND;
      case 405 -> ErrorCode.METHOD_NOT_ALLOWED;
      case 413, 431 -> ErrorCode.PAYLOAD_TOO_LARGE;
      case 415 -> ErrorCode.UNSUPPORTED_MEDIA_TYPE;
      case 429 -> ErrorCode.RATE_LIMITED;
      case 503 -> ErrorCode.BACKEND_UNAVAILABLE;
      default -> status >= 500 ? ErrorCode.INTERNAL : ErrorCode.INVALID_ARGUMENT;
    };
  }

  private static String reason(int status) {
    return switch (status) {
      case 400 -> "bad request";
      case 404 -> "no such path";
      case 405 -> "method not allowed here";
      case 413 -> "request body too large";
      case 414 -> "request URI too long";
      case 431 -> "request headers too large";
      case 503 -> "the server is not taking requests now";
      default -> "HTTP " + status;
    };
  }
}

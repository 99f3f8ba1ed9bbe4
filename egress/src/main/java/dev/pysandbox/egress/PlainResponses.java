package dev.pysandbox.egress;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The proxy's own answers: short {@code text/plain} bodies that the sandboxed code (and the agent
 * reading its output) can act on, rather than Jetty's HTML error pages.
 */
final class PlainResponses {
  static final String REFUSED_PREFIX = "Refused by pysandbox's network policy: ";

  private PlainResponses() {}

  /** 403 with {@code Refused by pysandbox's network policy: <reason>}. */
  static void refused(Request request, Response response, Callback callback, String reason) {
    write(request, response, callback, 403, REFUSED_PREFIX + reason);
  }

  /** Any status with a one-line text body; the connection is closed after it. */
  static void write(
      Request request, Response response, Callback callback, int status, String text) {
    if (response.isCommitted()) {
      callback.failed(new IllegalStateException(text));
      return;
    }
    byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
    response.write(true, ByteBuffer.wrap(body), callback);
  }
}

package dev.pysandbox.http;

import dev.pysandbox.util.RandomIds;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's own error answers (a malformed request, headers too large, {@code sendError} from a
 * servlet) in our error shape: JSON whatever the client accepts, for every method, never an HTML
 * page or a stack trace. Jetty keeps the writing (buffers, completion); only the body is ours.
 * {@link ForServlets} is the same for the servlet context, whose error handling Jetty completes
 * differently.
 */
final class JsonErrorHandler extends org.eclipse.jetty.server.handler.ErrorHandler {
  JsonErrorHandler() {
    configure(this);
  }

  private static void configure(org.eclipse.jetty.server.handler.ErrorHandler handler) {
    handler.setShowStacks(false);
    handler.setShowCauses(false);
    handler.setShowOrigin(false);
    handler.setShowMessageInTitle(false);
    handler.setDefaultResponseMimeType("application/json");
  }

  @Override
  public boolean errorPageForMethod(String method) {
    return true;
  }

  @Override
  protected boolean generateAcceptableResponse(
      Request request,
      Response response,
      Callback callback,
      String contentType,
      List<Charset> charsets,
      int code,
      String message,
      Throwable cause)
      throws java.io.IOException {
    addRequestId(response);
    return super.generateAcceptableResponse(
        request,
        response,
        callback,
        "application/json",
        List.of(StandardCharsets.UTF_8),
        code,
        message,
        cause);
  }

  @Override
  protected void writeErrorJson(
      Request request, PrintWriter writer, int code, String message, Throwable cause) {
    writer.write(body(code, message));
  }

  /** Jetty's reason phrase ("Not Found") says less than ours; any other message is kept. */
  static String body(int code, String message) {
    boolean plain = message == null || message.equals(HttpStatus.getMessage(code));
    return ErrorBodies.forStatus(code, plain ? null : message);
  }

  /** An error Jetty answers before any filter ran still carries a request id. */
  static void addRequestId(Response response) {
    if (!response.getHeaders().contains(RequestFilter.REQUEST_ID_HEADER)) {
      response.getHeaders().put(RequestFilter.REQUEST_ID_HEADER, RandomIds.hex(8));
    }
  }

  /** The same answers for errors inside the servlet context. */
  static final class ForServlets extends org.eclipse.jetty.ee10.servlet.ErrorHandler {
    ForServlets() {
      configure(this);
    }

    @Override
    public boolean errorPageForMethod(String method) {
      return true;
    }

    @Override
    protected boolean generateAcceptableResponse(
        Request request,
        Response response,
        Callback callback,
        String contentType,
        List<Charset> charsets,
        int code,
        String message,
        Throwable cause)
        throws java.io.IOException {
      addRequestId(response);
      return super.generateAcceptableResponse(
          request,
          response,
          callback,
          "application/json",
          List.of(StandardCharsets.UTF_8),
          code,
          message,
          cause);
    }

    @Override
    protected void writeErrorJson(
        Request request, PrintWriter writer, int code, String message, Throwable cause) {
      writer.write(body(code, message));
    }
  }
}

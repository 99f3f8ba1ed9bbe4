package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** Every path nothing else is mounted at: 404 in the error shape, whatever the method. */
final class NotFoundServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    ErrorBodies.send(
        response,
        ErrorCode.NOT_FOUND,
        "no such path: "
            + request.getMethod()
            + " "
            + PysandboxException.quote(request.getRequestURI())
            + " (MCP is at /mcp)");
  }
}

package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Keeps each MCP session to the tenant that opened it: the SDK knows sessions by id alone, so
 * without this another tenant's key could send messages into a session, read its stream or end it.
 * A session id used by another tenant is answered as one that does not exist (404).
 */
final class McpSessionFilter extends HttpFilter {
  private static final long serialVersionUID = 1L;
  private static final String SESSION_HEADER = "Mcp-Session-Id";

  /** More owners than this and the oldest are forgotten (their sessions are long swept). */
  private static final int MAX_REMEMBERED = 100_000;

  private final transient Map<String, String> owners =
      new LinkedHashMap<>(16, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
          return size() > MAX_REMEMBERED;
        }
      };

  @Override
  protected void doFilter(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    String tenant = (String) request.getAttribute(HttpFace.TENANT_ATTRIBUTE);
    String session = request.getHeader(SESSION_HEADER);
    if (session != null) {
      String owner;
      synchronized (owners) {
        owner = owners.get(session);
      }
      if (owner != null && !owner.equals(tenant)) {
        ErrorBodies.send(response, ErrorCode.NOT_FOUND, "MCP session not found (start a new one)");
        return;
      }
    }
    chain.doFilter(request, response);
    String opened = response.getHeader(SESSION_HEADER);
    synchronized (owners) {
      if (opened != null && session == null) {
        owners.put(opened, tenant);
      } else if (session != null
          && "DELETE".equals(request.getMethod())
          && response.getStatus() < 300) {
        owners.remove(session);
      }
    }
  }
}

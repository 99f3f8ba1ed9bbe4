package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Keeps each MCP session to the tenant that opened it: the MCP transport knows sessions by id
 * alone, so without this another tenant's key could send messages into a session, read its stream
 * or end it. A session id used by another tenant is answered exactly as one that does not exist: a
 * session id the filter has no owner for gets the same 404, whatever the method (passing those
 * through would let the transport's own answers tell the two apart). The owner is remembered as the
 * transport sets the header, before the answer can reach the client, whose next message may come at
 * once.
 */
final class McpSessionFilter extends HttpFilter {
  private static final long serialVersionUID = 1L;
  private static final String SESSION_HEADER = "Mcp-Session-Id";

  /**
   * More owners than this and the oldest are forgotten; a client still in one of those sessions
   * gets 404 and, as the MCP spec says it must, starts a new one.
   */
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
    if (session == null) {
      chain.doFilter(request, new OwnerRecorder(response, tenant));
      return;
    }
    String owner;
    synchronized (owners) {
      owner = owners.get(session);
    }
    if (owner == null || !owner.equals(tenant)) {
      ErrorBodies.send(response, ErrorCode.NOT_FOUND, "MCP session not found (start a new one)");
      return;
    }
    chain.doFilter(request, response);
    if ("DELETE".equals(request.getMethod()) && response.getStatus() < 300) {
      synchronized (owners) {
        owners.remove(session);
      }
    }
  }

  /** Remembers the tenant of the session whose id the SDK puts on the answer. */
  private final class OwnerRecorder extends HttpServletResponseWrapper {
    private final String tenant;

    OwnerRecorder(HttpServletResponse response, String tenant) {
      super(response);
      this.tenant = tenant;
    }

    @Override
    public void setHeader(String name, String value) {
      remember(name, value);
      super.setHeader(name, value);
    }

    @Override
    public void addHeader(String name, String value) {
      remember(name, value);
      super.addHeader(name, value);
    }

    private void remember(String name, String value) {
      if (value != null && SESSION_HEADER.equalsIgnoreCase(name)) {
        synchronized (owners) {
          owners.put(value, tenant);
        }
      }
    }
  }
}

package dev.pysandbox.mcp;

import io.modelcontextprotocol.server.McpSyncServer;
import jakarta.servlet.http.HttpServlet;
import java.util.concurrent.ExecutorService;

/** MCP over Streamable HTTP, as the container that mounts it sees it. */
public final class McpHttpEndpoint {
  /** Where the servlet is mounted (and the only path it answers). */
  public static final String PATH = "/mcp";

  private final HttpServlet servlet;
  private final McpSyncServer server;
  private final RunSubscriptions subscriptions;
  private final ExecutorService cancels;

  McpHttpEndpoint(
      HttpServlet servlet,
      McpSyncServer server,
      RunSubscriptions subscriptions,
      ExecutorService cancels) {
    this.servlet = servlet;
    this.server = server;
    this.subscriptions = subscriptions;
    this.cancels = cancels;
  }

  /** The servlet to mount at {@link #PATH}; it needs async support. */
  public HttpServlet servlet() {
    return servlet;
  }

  /**
   * Ends every MCP session (their open streams complete, their calls in flight are cancelled); new
   * messages are refused with 503.
   */
  public void close() {
    subscriptions.close();
    server.closeGracefully();
    cancels.shutdown();
  }
}

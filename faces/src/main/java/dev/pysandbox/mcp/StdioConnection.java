package dev.pysandbox.mcp;

import io.modelcontextprotocol.server.McpSyncServer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;

/** An MCP connection over stdio, as the command that serves it sees it. */
public final class StdioConnection {
  private final StdioTransport transport;
  private final McpSyncServer server;
  private final ExecutorService calls;
  private final RunSubscriptions subscriptions;

  StdioConnection(
      StdioTransport transport,
      McpSyncServer server,
      ExecutorService calls,
      RunSubscriptions subscriptions) {
    this.transport = transport;
    this.server = server;
    this.calls = calls;
    this.subscriptions = subscriptions;
  }

  /** Completes when the client has closed our stdin: the server should stop. */
  public CompletableFuture<Void> closed() {
    return transport.closed();
  }

  /**
   * Answers what can still be answered within {@code timeoutMillis} (calls in flight, then the
   * writes queued), then stops.
   */
  public void close(long timeoutMillis) {
    long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
    subscriptions.close();
    transport.awaitAnswers(timeoutMillis);
    calls.shutdownNow();
    transport.flush(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
    transport.close();
    server.close();
  }
}

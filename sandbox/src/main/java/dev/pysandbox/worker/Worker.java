package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.concurrent.CompletableFuture;

/**
 * The server's end of the worker protocol with one runner, whatever carries it: what the core uses
 * of a sandbox's runner. One request is in flight at a time; output the runner's processes write
 * between requests is attributed to the next. The carrier is the backend's business: bwrap's
 * launcher hands the runner three connected sockets, a container's runner connects itself through a
 * door of the {@link WorkerHub} ({@link WorkerConnection} serves both).
 */
public interface Worker {
  /** The sandbox it belongs to. */
  String sandboxId();

  /** Completes with the runner's {@code ready} frame once every channel is connected. */
  CompletableFuture<ObjectNode> ready();

  /** Completes with a reason when the runner's channel closes; never completes exceptionally. */
  CompletableFuture<String> closed();

  boolean isOpen();

  /**
   * Sends one request and completes when the runner answers it; completes exceptionally with {@link
   * WorkerLostException} (holding the output so far) if the runner goes away first.
   *
   * @throws IllegalStateException when another request is in flight or the worker is closed
   */
  CompletableFuture<WorkerReply> request(String op, ObjectNode payload);

  /** {@link #request(String, ObjectNode)}, telling {@code listener} the output as it arrives. */
  CompletableFuture<WorkerReply> request(String op, ObjectNode payload, RequestListener listener);

  /** Asks the runner to raise KeyboardInterrupt in the request that is running, if any. */
  void interrupt();

  /** The output of the request in flight so far (or of the idle time since the last one). */
  WorkerReply partial();

  /** Bytes written to stdout and stderr by the request in flight (kept or not); cheap to poll. */
  long outputBytes();

  /** Bytes of output that arrived between requests, before the latest request began. */
  long idleOutputBytes();

  /** How the sandbox broke the protocol (it was cut off for it), or {@code null}. */
  String protocolViolation();

  /** Closes the channels; a request in flight fails with {@link WorkerLostException}. */
  void close(String reason);
}

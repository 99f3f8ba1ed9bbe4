package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.Json;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The output a sandbox writes while no request is in flight: it is attributed to the next request,
 * and past {@code max} bytes of it something the code left running is writing, so reading pauses
 * until that request (the writer blocks on a full socket instead of costing the server a core) and
 * the runner is asked to kill every other process in its sandbox. Apart from {@link
 * WorkerConnection} because it is a policy of its own, with its own counts; its lock is held only
 * to count, never while it writes, so it nests inside the connection's.
 */
final class IdleOutputGuard {
  // The connection's logger: the warning keeps the name it had before the guard was split off.
  private static final Logger log = LoggerFactory.getLogger(WorkerConnection.class);
  private static final ObjectMapper JSON = Json.mapper();
  private static final long MIB = 1024 * 1024;

  private final String sandboxId;
  private final long max;
  private final RunnerSockets sockets;
  private final Consumer<ObjectNode> send;
  private long idleBytes;
  private long requestIdleBytes;
  private boolean paused;
  private String lastRequestId;

  /**
   * @param max bytes of output between requests past which reading pauses
   * @param send writes a line to the runner's control socket
   */
  IdleOutputGuard(String sandboxId, long max, RunnerSockets sockets, Consumer<ObjectNode> send) {
    this.sandboxId = sandboxId;
    this.max = max;
    this.sockets = sockets;
    this.send = send;
  }

  /**
   * A request begins: the idle output so far leads it ({@link #leading}), and counting starts over.
   *
   * @return true when reading was paused and must resume
   */
  synchronized boolean begin(String requestId) {
    lastRequestId = requestId;
    requestIdleBytes = idleBytes;
    idleBytes = 0;
    boolean resume = paused;
    paused = false;
    return resume;
  }

  /** Bytes of idle output that led the latest request. */
  synchronized long leading() {
    return requestIdleBytes;
  }

  /**
   * Output arrived while no request is in flight.
   *
   * @return the idle bytes so far when they have just passed the limit (then {@link #stopWriters}),
   *     else -1
   */
  synchronized long arrived(int bytes) {
    // Before the first request only the runner itself (and what it preloads) has run.
    if (lastRequestId == null) {
      return -1;
    }
    idleBytes += bytes;
    if (idleBytes > max && !paused) {
      paused = true;
      return idleBytes;
    }
    return -1;
  }

  /**
   * Output past the limit arrived between requests: stops reading it until the next request, and
   * asks the runner to kill every other process in its sandbox (hub thread only).
   */
  void stopWriters(long bytes) {
    sockets.readOutput(false);
    log.warn(
        "security: sandbox {}: {} bytes of output arrived between runs, over the {} MiB output"
            + " limit (output_max_mb); reading it is paused and every process in the sandbox but"
            + " its runner is being killed",
        sandboxId,
        bytes,
        max / MIB);
    if (sockets.socket(RunnerSockets.Channel.CTL) == null) {
      return;
    }
    ObjectNode msg = JSON.createObjectNode();
    msg.put("op", "stop_others");
    // The runner kills only if no request came since, lest it kill what a newer one started.
    synchronized (this) {
      msg.put("after", lastRequestId);
    }
    send.accept(msg);
  }
}

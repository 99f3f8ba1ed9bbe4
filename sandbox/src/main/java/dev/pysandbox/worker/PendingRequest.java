package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The one request in flight on a {@link WorkerConnection}: its random id (and the frame prefix that
 * id gives), the output captured for it, its displays, and the future its answer completes. Guarded
 * by the connection's lock.
 */
final class PendingRequest {
  final String id;
  final byte[] prefix;
  final CompletableFuture<WorkerReply> future = new CompletableFuture<>();
  final OutputCapture out;
  final OutputCapture err;

  /** Output that arrived between requests and leads this one's (not counted against it). */
  final long idleBytes;

  final RequestListener listener;
  private final List<ObjectNode> displays = new ArrayList<>();
  private final long started = System.nanoTime();
  private long displayBytes;
  private int dropped;

  PendingRequest(
      String id, OutputCapture out, OutputCapture err, long idleBytes, RequestListener listener) {
    this.id = id;
    this.listener = listener;
    this.prefix = FrameReader.requestPrefix(id);
    this.out = out;
    this.err = err;
    this.idleBytes = idleBytes;
  }

  /**
   * Takes a display frame, parsed or not ({@code node} null), or counts it dropped.
   *
   * @return the display's bundle when taken, else null
   */
  ObjectNode display(JsonNode node, long size) {
    if (node != null && node.path("data") instanceof ObjectNode bundle) {
      displayBytes += size;
      displays.add(bundle);
      return bundle;
    }
    dropped++;
    return null;
  }

  /** Bytes this request may still take in displays (of {@code max} in all). */
  long displayRoom(long max) {
    return max - displayBytes;
  }

  /** Bytes written to stdout and stderr since it began, kept or not. */
  long outputBytes() {
    return out.total() + err.total() - idleBytes;
  }

  WorkerReply reply(ObjectNode frame) {
    return new WorkerReply(
        frame,
        out.snapshot(),
        err.snapshot(),
        List.copyOf(displays),
        dropped,
        System.nanoTime() - started);
  }
}

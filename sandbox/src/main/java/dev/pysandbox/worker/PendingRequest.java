package dev.pysandbox.worker;

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
  final List<ObjectNode> displays = new ArrayList<>();
  final long started = System.nanoTime();
  long displayBytes;
  int dropped;

  PendingRequest(
      String id, OutputCapture out, OutputCapture err, long idleBytes, RequestListener listener) {
    this.id = id;
    this.listener = listener;
    this.prefix = FrameReader.requestPrefix(id);
    this.out = out;
    this.err = err;
    this.idleBytes = idleBytes;
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

package dev.pysandbox.mcp;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * One HTTP response carrying an SSE stream: what a stream ({@link SseStream}) writes while a client
 * is connected. A write that fails (the client went away) closes it; the stream then keeps its
 * events for a resume. Writes are serialised; {@link #close} may come from another thread while a
 * write blocks on a client that stopped reading, and ends it.
 */
final class SseConnection {
  private final AsyncContext async;
  private final ServletOutputStream out;
  private volatile boolean closed;

  private SseConnection(AsyncContext async, ServletOutputStream out) {
    this.async = async;
    this.out = out;
  }

  /**
   * Answers {@code request} with an SSE stream (200, {@code text/event-stream}) that stays open
   * until {@link #close}; the server's idle timeout does not end it.
   */
  static SseConnection open(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    response.setStatus(HttpServletResponse.SC_OK);
    response.setContentType("text/event-stream");
    response.setCharacterEncoding("UTF-8");
    response.setHeader("Cache-Control", "no-cache");
    response.setHeader("X-Accel-Buffering", "no");
    AsyncContext async = request.startAsync();
    async.setTimeout(0);
    SseConnection c = new SseConnection(async, response.getOutputStream());
    async.addListener(
        new AsyncListener() {
          @Override
          public void onComplete(AsyncEvent event) {
            c.closed = true;
          }

          @Override
          public void onTimeout(AsyncEvent event) {
            c.close();
          }

          @Override
          public void onError(AsyncEvent event) {
            c.close();
          }

          @Override
          public void onStartAsync(AsyncEvent event) {
            // nothing to do
          }
        });
    return c;
  }

  /** An SSE frame: the event's id, its type {@code message} and its data (one line of JSON). */
  static byte[] frame(String id, byte[] json) {
    byte[] head = ("id: " + id + "\nevent: message\ndata: ").getBytes(StandardCharsets.UTF_8);
    byte[] frame = new byte[head.length + json.length + 2];
    System.arraycopy(head, 0, frame, 0, head.length);
    System.arraycopy(json, 0, frame, head.length, json.length);
    frame[frame.length - 2] = '\n';
    frame[frame.length - 1] = '\n';
    return frame;
  }

  /**
   * Writes and flushes {@code bytes}.
   *
   * @return false when the connection is closed or the write failed (it is closed now)
   */
  synchronized boolean write(byte[] bytes) {
    if (closed) {
      return false;
    }
    try {
      out.write(bytes);
      out.flush();
      return true;
    } catch (IOException | IllegalStateException e) {
      close();
      return false;
    }
  }

  boolean isOpen() {
    return !closed;
  }

  /** Ends the response (the client sees the stream end). Idempotent. */
  void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      async.complete();
    } catch (IllegalStateException e) {
      // already completed by the container
    }
  }
}

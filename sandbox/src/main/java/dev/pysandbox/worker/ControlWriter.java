package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.Json;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * Writes a connection's requests down its non-blocking control socket: at once when the socket
 * takes them, otherwise queued and flushed by the hub when the socket can take more. Callable from
 * any thread; lines go out whole and in order.
 */
final class ControlWriter {
  private static final ObjectMapper JSON = Json.mapper();

  private final ArrayDeque<ByteBuffer> writes = new ArrayDeque<>();
  private final WorkerHub hub;

  /** Told why when a write fails; it closes the connection (on the hub thread). */
  private final Consumer<String> failed;

  ControlWriter(WorkerHub hub, Consumer<String> failed) {
    this.hub = hub;
    this.failed = failed;
  }

  /**
   * Sends one JSON line.
   *
   * @param channel the control socket, or null when not connected
   * @throws IllegalStateException when not connected
   */
  void send(ObjectNode msg, SocketChannel channel, SelectionKey key, String sandboxId) {
    byte[] bytes;
    try {
      bytes = JSON.writeValueAsBytes(msg);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    ByteBuffer buf = ByteBuffer.allocate(bytes.length + 1).put(bytes).put((byte) '\n').flip();
    synchronized (writes) {
      if (channel == null) {
        throw new IllegalStateException("worker " + sandboxId + " is not connected");
      }
      if (writes.isEmpty()) {
        try {
          channel.write(buf);
        } catch (IOException e) {
          failed.accept("writing to the runner failed: " + e.getMessage());
          return;
        }
      }
      if (buf.hasRemaining()) {
        writes.add(buf);
        hub.wantWrite(key);
      }
    }
  }

  /** Called by the hub when the control socket can take more; true when all is written. */
  boolean flush(SocketChannel ctl) {
    synchronized (writes) {
      try {
        while (!writes.isEmpty()) {
          ByteBuffer head = writes.peek();
          ctl.write(head);
          if (head.hasRemaining()) {
            return false;
          }
          writes.poll();
        }
      } catch (IOException e) {
        writes.clear();
        failed.accept("writing to the runner failed: " + e.getMessage());
      }
      return true;
    }
  }
}

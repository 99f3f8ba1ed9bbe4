package dev.pysandbox.worker;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sandbox's own listening socket (see {@link WorkerHub#openDoor}): what a container's runner
 * connects through, since it inherits no socket. Connections through it may only introduce
 * themselves as its sandbox; it takes at most {@link #MAX_CONNECTIONS}.
 */
public final class WorkerDoor implements Closeable {
  private static final Logger log = LoggerFactory.getLogger(WorkerDoor.class);

  /** Connections a door accepts in all: three channels, and a few retries. */
  static final int MAX_CONNECTIONS = 8;

  private final WorkerHub hub;
  private final WorkerConnection connection;
  private final Path socket;
  private final ServerSocketChannel listener;
  private SelectionKey key;
  private int accepted;
  private volatile boolean closed;

  WorkerDoor(
      WorkerHub hub, WorkerConnection connection, Path socket, ServerSocketChannel listener) {
    this.hub = hub;
    this.connection = connection;
    this.socket = socket;
    this.listener = listener;
  }

  /** The socket file on the host. */
  public Path socket() {
    return socket;
  }

  /** Hub thread: starts accepting, unless already closed. */
  void register(Selector selector) throws IOException {
    if (!closed) {
      key = listener.register(selector, SelectionKey.OP_ACCEPT, this);
    }
  }

  /** Hub thread: takes what waits, up to the door's limit. */
  void accept(Selector selector) throws IOException {
    SocketChannel s;
    while (!closed && (s = listener.accept()) != null) {
      if (++accepted > MAX_CONNECTIONS) {
        log.warn(
            "sandbox {}: its door took {} connections; closing it",
            connection.sandboxId(),
            accepted - 1);
        hub.closeQuietly(s);
        close();
        return;
      }
      s.configureBlocking(false);
      s.register(selector, SelectionKey.OP_READ, new HelloReader.Hello(connection));
    }
  }

  /** Stops listening and deletes the socket file; connections already made stay. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    hub.execute(
        () -> {
          if (key != null) {
            key.cancel();
          }
          try {
            listener.close();
          } catch (IOException e) {
            log.debug("closing the door of {}", connection.sandboxId(), e);
          }
        });
    try {
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      log.debug("deleting {}", socket, e);
    }
  }
}

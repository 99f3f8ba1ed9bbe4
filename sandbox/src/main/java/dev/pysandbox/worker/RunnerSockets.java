package dev.pysandbox.worker;

import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One runner's sockets and their selection keys, as they connect: which channels are there, pausing
 * and draining its stdout and stderr, closing them all. Apart from {@link WorkerConnection} because
 * which sockets exist is a matter of the transport, not of the request in flight; the connection
 * asks here and keeps its own lock for its requests. Its own lock is held only to read or set a
 * field, never while the hub reads a socket, so it nests inside the connection's.
 */
final class RunnerSockets {
  /**
   * A runner's channels; {@code LIFE} is optional: a connection on which nothing is said, held by
   * whatever in the sandbox must know when the server is gone or done with it (a container's init
   * kills every process and ends when it closes, as bwrap's {@code --die-with-parent} does).
   */
  enum Channel {
    CTL,
    OUT,
    ERR,
    LIFE
  }

  private final WorkerHub hub;
  private final Map<Channel, SocketChannel> sockets = new EnumMap<>(Channel.class);
  private final Map<Channel, SelectionKey> keys = new EnumMap<>(Channel.class);

  RunnerSockets(WorkerHub hub) {
    this.hub = hub;
  }

  /** Takes a channel's socket; false when that channel is connected already. */
  synchronized boolean attach(Channel channel, SocketChannel socket, SelectionKey key) {
    if (sockets.containsKey(channel)) {
      return false;
    }
    sockets.put(channel, socket);
    keys.put(channel, key);
    return true;
  }

  /** The three channels a runner must connect are there ({@code LIFE} is optional). */
  synchronized boolean connected() {
    return sockets.containsKey(Channel.CTL)
        && sockets.containsKey(Channel.OUT)
        && sockets.containsKey(Channel.ERR);
  }

  /** A channel's socket, or null before it connects. */
  synchronized SocketChannel socket(Channel channel) {
    return sockets.get(channel);
  }

  /** A channel's selection key, or null before it connects. */
  synchronized SelectionKey key(Channel channel) {
    return keys.get(channel);
  }

  /** Starts or stops reading stdout and stderr (hub thread only). */
  void readOutput(boolean on) {
    hub.reading(key(Channel.OUT), on);
    hub.reading(key(Channel.ERR), on);
  }

  /** Reads whatever stdout and stderr hold right now into {@code c} (hub thread only). */
  void drain(WorkerConnection c) {
    hub.drainNow(c, Channel.OUT, socket(Channel.OUT));
    hub.drainNow(c, Channel.ERR, socket(Channel.ERR));
  }

  /** Closes every socket that connected. */
  void close() {
    List<SocketChannel> all;
    synchronized (this) {
      all = List.copyOf(sockets.values());
    }
    all.forEach(hub::closeQuietly);
  }
}

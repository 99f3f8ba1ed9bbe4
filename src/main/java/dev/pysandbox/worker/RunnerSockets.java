package dev.pysandbox.worker;

import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

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
  private SocketChannel ctl;
  private SocketChannel out;
  private SocketChannel err;
  private SocketChannel life;
  private SelectionKey ctlKey;
  private SelectionKey outKey;
  private SelectionKey errKey;

  RunnerSockets(WorkerHub hub) {
    this.hub = hub;
  }

  /** Takes a channel's socket; false when that channel is connected already. */
  synchronized boolean attach(Channel channel, SocketChannel socket, SelectionKey key) {
    SocketChannel existing =
        switch (channel) {
          case CTL -> ctl;
          case OUT -> out;
          case ERR -> err;
          case LIFE -> life;
        };
    if (existing != null) {
      return false;
    }
    switch (channel) {
      case CTL -> {
        ctl = socket;
        ctlKey = key;
      }
      case OUT -> {
        out = socket;
        outKey = key;
      }
      case ERR -> {
        err = socket;
        errKey = key;
      }
      case LIFE -> life = socket;
    }
    return true;
  }

  /** The three channels a runner must connect are there ({@code LIFE} is optional). */
  synchronized boolean connected() {
    return ctl != null && out != null && err != null;
  }

  /** The control socket, or null before it connects. */
  synchronized SocketChannel ctl() {
    return ctl;
  }

  synchronized SelectionKey ctlKey() {
    return ctlKey;
  }

  /** Starts or stops reading stdout and stderr (hub thread only). */
  void readOutput(boolean on) {
    SelectionKey o;
    SelectionKey e;
    synchronized (this) {
      o = outKey;
      e = errKey;
    }
    hub.reading(o, on);
    hub.reading(e, on);
  }

  /** Reads whatever stdout and stderr hold right now into {@code c} (hub thread only). */
  void drain(WorkerConnection c) {
    SocketChannel o;
    SocketChannel e;
    synchronized (this) {
      o = out;
      e = err;
    }
    hub.drainNow(c, Channel.OUT, o);
    hub.drainNow(c, Channel.ERR, e);
  }

  /** Closes every socket that connected. */
  void close() {
    SocketChannel[] all;
    synchronized (this) {
      all = new SocketChannel[] {ctl, out, err, life};
    }
    for (SocketChannel s : all) {
      hub.closeQuietly(s);
    }
  }
}

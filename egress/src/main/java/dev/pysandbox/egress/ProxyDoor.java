package dev.pysandbox.egress;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sandbox's door: its Unix socket (a connector of its own), its policy and listener, and the
 * requests and tunnels open through it, so that it can bound them and end them when it closes.
 */
final class ProxyDoor implements EgressProxy.Door {
  static final String ATTRIBUTE = ProxyDoor.class.getName();
  private static final Logger LOG = LoggerFactory.getLogger(ProxyDoor.class);

  private final String label;
  private final EgressPolicy policy;
  private final EgressListener listener;
  private final UnixDomainServerConnector connector;
  private final Path socket;
  private final int maxOpen;
  private final Clock clock;
  private final Consumer<ProxyDoor> onClose;
  private final Set<Exchange> open = new HashSet<>();
  private boolean closed;

  ProxyDoor(
      String label,
      EgressPolicy policy,
      EgressListener listener,
      UnixDomainServerConnector connector,
      int maxOpen,
      Clock clock,
      Consumer<ProxyDoor> onClose) {
    this.label = label;
    this.policy = policy;
    this.listener = listener;
    this.connector = connector;
    this.socket = connector.getUnixDomainPath();
    this.maxOpen = maxOpen;
    this.clock = clock;
    this.onClose = onClose;
  }

  static ProxyDoor of(Request request) {
    return (ProxyDoor) request.getAttribute(ATTRIBUTE);
  }

  @Override
  public Path socket() {
    return socket;
  }

  @Override
  public EgressPolicy policy() {
    return policy;
  }

  UnixDomainServerConnector connector() {
    return connector;
  }

  synchronized boolean closed() {
    return closed;
  }

  /** A new exchange through this door, or null when {@code maxOpen} are open already. */
  synchronized Exchange begin(String method, String host, int port) {
    if (closed || open.size() >= maxOpen) {
      return null;
    }
    Exchange exchange = new Exchange(label, method, host, port, clock, listener, this::ended);
    open.add(exchange);
    return exchange;
  }

  private synchronized void ended(Exchange exchange) {
    open.remove(exchange);
  }

  /** Answers 429 to a request over the limit, and reports it. */
  void tooMany(
      Request request, Response response, Callback callback, String method, String host, int port) {
    String reason =
        "this sandbox already has "
            + maxOpen
            + " connections open through the egress proxy (limit "
            + maxOpen
            + ")";
    new Exchange(label, method, host, port, clock, listener, e -> {}).refuse(reason);
    PlainResponses.write(request, response, callback, 429, reason);
  }

  /** Stops the connector, deletes the socket file, and ends every open request and tunnel. */
  @Override
  public void close() {
    List<Exchange> toAbort;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      toAbort = new ArrayList<>(open);
    }
    onClose.accept(this);
    try {
      connector.stop();
    } catch (Exception e) {
      LOG.warn("egress {}: stopping its connector failed", label, e);
    }
    connector.getServer().removeConnector(connector);
    for (Exchange exchange : toAbort) {
      exchange.abort();
    }
    try {
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      LOG.warn("egress {}: could not delete {}", label, socket, e);
    }
  }

  @Override
  public String toString() {
    return "egress door " + label + " at " + socket;
  }
}

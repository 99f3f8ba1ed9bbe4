package dev.pysandbox.egress;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The only way out of a sandbox: an HTTP proxy served on one Unix socket per sandbox (a "door"),
 * each with its own {@link EgressPolicy}. A sandbox has no network but loopback; a forwarder inside
 * it (see {@code egress_forward.py}) pipes TCP connections from 127.0.0.1 to the socket bound into
 * it, and its code gets {@code HTTP_PROXY}/{@code HTTPS_PROXY} pointing there.
 *
 * <p>Every request and tunnel is checked by {@link EgressPolicy#checkHost}, its host resolved once
 * on the server and every answer checked by {@link EgressPolicy#checkAddress}, and the connection
 * made to a checked address. Refusals are answered {@code 403 text/plain} with {@code Refused by
 * pysandbox's network policy: <reason>}. A door allows {@value #MAX_OPEN_PER_DOOR} requests and
 * tunnels at once (more get 429) on at most {@value #MAX_CONNECTIONS_PER_DOOR} connections, tunnels
 * close after {@value #IDLE_TIMEOUT_MILLIS} ms idle, and a forwarded request body may be at most
 * {@value #MAX_REQUEST_BODY} bytes (more get 413).
 *
 * <p>Runs one Jetty server with its own small daemon thread pool and no TCP connector. Names are
 * resolved on the proxy's threads with the JVM's resolver (blocking, cached by the JVM).
 * Thread-safe.
 */
public final class EgressProxy implements EgressGate {
  /** Requests and tunnels open at once through one door. */
  public static final int MAX_OPEN_PER_DOOR = 16;

  /**
   * Connections to one door's socket at once, idle ones included (the forwarder keeps to the same
   * number); past it the door stops accepting until one closes.
   */
  public static final int MAX_CONNECTIONS_PER_DOOR = 64;

  /** Idle timeout of a tunnel, a forwarded exchange, and a sandbox's connection to its door. */
  public static final long IDLE_TIMEOUT_MILLIS = 60_000;

  /** Largest request body a forwarded request may carry (64 MiB). */
  public static final long MAX_REQUEST_BODY = 64L * 1024 * 1024;

  /** Worker threads shared by every door; each door's selector adds one of its own. */
  static final int WORKER_THREADS = 32;

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path socketDir;
  private final DestinationCheck check;
  private final Clock clock;
  private final List<ProxyDoor> doors = new CopyOnWriteArrayList<>();
  private Server server;
  private QueuedThreadPool threads;
  private DoorRouter router;
  private ForwardHandler forward;
  private boolean closed;

  /**
   * A proxy whose sockets live in {@code socketDir}. Nothing runs until {@link #start()}.
   *
   * @param socketDir the directory of the door sockets; the server owns it. Created with mode 0711
   *     when missing (others may reach a socket whose name they were given, not list them); an
   *     existing directory's mode is left as it is
   */
  public EgressProxy(Path socketDir) {
    this(socketDir, InetAddress::getAllByName, Clock.systemUTC());
  }

  EgressProxy(Path socketDir, DestinationCheck.HostResolver resolver, Clock clock) {
    this.socketDir = Objects.requireNonNull(socketDir, "socketDir").toAbsolutePath();
    this.check = new DestinationCheck(Objects.requireNonNull(resolver, "resolver"));
    this.clock = Objects.requireNonNull(clock, "clock");
    int longest = this.socketDir.toString().length() + 1 + socketName().length();
    if (longest > UnixDomainServerConnector.MAX_UNIX_DOMAIN_PATH_LENGTH) {
      throw new IllegalArgumentException(
          "egress socket directory "
              + this.socketDir
              + " is too long: its socket paths would be "
              + longest
              + " bytes (limit "
              + UnixDomainServerConnector.MAX_UNIX_DOMAIN_PATH_LENGTH
              + ")");
    }
  }

  /**
   * Creates the socket directory if needed and starts the server. Idempotent.
   *
   * @throws UncheckedIOException when the directory cannot be made
   * @throws IllegalStateException when the proxy was closed, or Jetty does not start
   */
  @Override
  public synchronized void start() {
    if (closed) {
      throw new IllegalStateException("the egress proxy was closed");
    }
    if (server != null) {
      return;
    }
    try {
      if (!Files.isDirectory(socketDir)) {
        Files.createDirectories(socketDir);
        Files.setPosixFilePermissions(socketDir, PosixFilePermissions.fromString("rwx--x--x"));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the egress socket directory " + socketDir, e);
    }
    threads = new QueuedThreadPool(WORKER_THREADS, 2);
    threads.setName("egress");
    threads.setDaemon(true);
    server = new Server(threads);
    forward = new ForwardHandler(check, MAX_REQUEST_BODY, IDLE_TIMEOUT_MILLIS);
    router = new DoorRouter(new TunnelHandler(check, forward, IDLE_TIMEOUT_MILLIS));
    server.setHandler(router);
    try {
      server.start();
    } catch (Exception e) {
      stopQuietly();
      throw new IllegalStateException("the egress proxy did not start: " + e.getMessage(), e);
    }
  }

  /**
   * A new door for one sandbox: a Unix socket file in the socket directory, with a random name and
   * mode 0666 (the sandbox runs as its own host uid and must be able to connect; the directory's
   * 0711 keeps the name from being listed), served with {@code policy}.
   *
   * @param label the sandbox's id, for logs
   * @param policy what this door allows
   * @param listener told of every attempt through this door
   * @return the open door; close it when the sandbox is gone
   * @throws IllegalStateException when the proxy is not started, or the socket cannot be served
   */
  @Override
  public Door open(String label, EgressPolicy policy, EgressListener listener) {
    Objects.requireNonNull(label, "label");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(listener, "listener");
    UnixDomainServerConnector connector;
    ProxyDoor door;
    synchronized (this) {
      if (server == null || closed) {
        throw new IllegalStateException("the egress proxy is not running");
      }
      HttpConfiguration config = new HttpConfiguration();
      config.setSendServerVersion(false);
      config.setSendXPoweredBy(false);
      // No acceptor thread: the door's one selector thread accepts too.
      connector = new UnixDomainServerConnector(server, 0, 1, new HttpConnectionFactory(config));
      connector.setUnixDomainPath(socketDir.resolve(socketName()));
      connector.setIdleTimeout(IDLE_TIMEOUT_MILLIS);
      connector.addBean(new NetworkConnectionLimit(MAX_CONNECTIONS_PER_DOOR, connector));
      door =
          new ProxyDoor(
              label, policy, listener, connector, MAX_OPEN_PER_DOOR, clock, this::doorClosed);
      threads.setMaxThreads(threads.getMaxThreads() + 1);
      router.add(connector, door);
      server.addConnector(connector);
      doors.add(door);
    }
    try {
      connector.start();
      Files.setPosixFilePermissions(door.socket(), PosixFilePermissions.fromString("rw-rw-rw-"));
    } catch (Exception e) {
      door.close();
      throw new IllegalStateException(
          "cannot open an egress door at " + door.socket() + ": " + e.getMessage(), e);
    }
    return door;
  }

  private synchronized void doorClosed(ProxyDoor door) {
    doors.remove(door);
    if (router != null) {
      router.remove(door.connector());
    }
    if (threads != null) {
      threads.setMaxThreads(Math.max(WORKER_THREADS, threads.getMaxThreads() - 1));
    }
  }

  /**
   * The server's own fetch (for {@code download_file}): GET {@code url} under {@code policy},
   * following up to {@value Downloader#MAX_REDIRECTS} redirects with every hop checked as a
   * sandbox's request would be, and the body streamed to {@code out}. Blocks the calling thread.
   *
   * @param url an http or https URL
   * @param policy what may be reached
   * @param maxBytes the most body bytes to accept; a larger body fails the download (what was
   *     written to {@code out} by then is to be discarded)
   * @param timeout the whole download's time limit, redirects included
   * @param out where the body goes; not closed
   * @param listener told of each hop as an attempt with method {@code DOWNLOAD}
   * @return the final status (always 2xx), content type (null when the server sent none), size and
   *     URL
   * @throws EgressRefused when the policy refuses a hop (its scheme, host or address)
   * @throws IOException on a non-2xx answer, too many redirects, a body over {@code maxBytes}, the
   *     timeout, or a network failure; the message says which
   */
  public Download download(
      URI url,
      EgressPolicy policy,
      long maxBytes,
      Duration timeout,
      OutputStream out,
      EgressListener listener)
      throws IOException, EgressRefused {
    return download(url, policy, maxBytes, timeout, MinimumRate.NONE, out, listener);
  }

  /**
   * As {@link #download(URI, EgressPolicy, long, Duration, OutputStream, EgressListener)}, with the
   * pace the origin must keep.
   */
  @Override
  public Download download(
      URI url,
      EgressPolicy policy,
      long maxBytes,
      Duration timeout,
      MinimumRate pace,
      OutputStream out,
      EgressListener listener)
      throws IOException, EgressRefused {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(out, "out");
    Objects.requireNonNull(listener, "listener");
    ForwardHandler handler;
    synchronized (this) {
      if (server == null || closed) {
        throw new IllegalStateException("the egress proxy is not running");
      }
      handler = forward;
    }
    return new Downloader(handler.getHttpClient(), check, clock)
        .download(url, policy, maxBytes, timeout, pace, out, listener);
  }

  /** Closes every door and stops the server. Idempotent. */
  @Override
  public void close() {
    List<ProxyDoor> open;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      open = new ArrayList<>(doors);
    }
    for (ProxyDoor door : open) {
      door.close();
    }
    synchronized (this) {
      stopQuietly();
    }
  }

  private void stopQuietly() {
    if (server != null) {
      try {
        server.stop();
      } catch (Exception e) {
        // Stopping is best effort: the threads are daemons and the sockets are gone.
      }
    }
  }

  private static String socketName() {
    byte[] random = new byte[12];
    RANDOM.nextBytes(random);
    return "door-" + HexFormat.of().formatHex(random) + ".sock";
  }
}

package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.api.Json;
import dev.pysandbox.util.DaemonThreads;
import java.io.Closeable;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every runner's sockets on one selector thread: however many sandboxes are idle, the server spends
 * one thread on them. Sandboxes connect to one Unix socket that only the server's user can reach
 * (the launcher connects on the sandbox's behalf before the sandbox starts); each connection
 * introduces itself with a hello line naming its sandbox, a one-time token and its channel (ctl,
 * out or err).
 *
 * <p>The thread is shared, so no sandbox may hold it: each ready socket gets one read of at most 64
 * KiB per round, a drain after an answer reads at most {@link #MAX_DRAIN_BYTES}, and big control
 * frames are parsed on {@link #parse}'s threads while their socket is not read.
 */
public final class WorkerHub implements Closeable {
  private static final Logger log = LoggerFactory.getLogger(WorkerHub.class);
  private static final ObjectMapper JSON = Json.mapper();

  /**
   * Most bytes one drain reads from a stream: more than its socket can hold (what was written
   * before an answer is all there), so a writer that never stops cannot keep the thread.
   */
  static final int MAX_DRAIN_BYTES = 1024 * 1024;

  private final Path socketPath;
  private final ServerSocketChannel server;
  private final Selector selector;
  private final Thread thread;
  private final Map<String, WorkerConnection> expected = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final ExecutorService parsers;
  private final Executor blocking;
  private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(64 * 1024);
  // Separate from readBuffer: a drain runs while a control frame read into readBuffer is parsed.
  private final ByteBuffer drainBuffer = ByteBuffer.allocateDirect(64 * 1024);
  private final HelloReader hellos;
  private volatile boolean running = true;

  private WorkerHub(Path socketPath, Executor blocking) throws IOException {
    this.socketPath = socketPath;
    this.blocking = blocking;
    Files.createDirectories(socketPath.getParent());
    Files.setPosixFilePermissions(
        socketPath.getParent(), PosixFilePermissions.fromString("rwx------"));
    Files.deleteIfExists(socketPath);
    this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socketPath), 4096);
    server.configureBlocking(false);
    this.selector = Selector.open();
    this.hellos = new HelloReader(expected, this);
    server.register(selector, SelectionKey.OP_ACCEPT);
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            2,
            2,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            DaemonThreads.numbered("pysandbox-frames-"));
    pool.allowCoreThreadTimeOut(true);
    this.parsers = pool;
    this.thread = DaemonThreads.newThread("pysandbox-io", this::loop);
    thread.start();
  }

  /**
   * Binds the hub's socket and starts its thread.
   *
   * @param socketPath at most 107 bytes; its directory is made private to the server's user
   */
  public static WorkerHub open(Path socketPath) throws IOException {
    return open(socketPath, task -> DaemonThreads.newThread("pysandbox-subcall", task).start());
  }

  /**
   * {@link #open(Path)}, with the server's pool for blocking work: the code's {@code llm_query}
   * calls wait for their answers there ({@link RequestListener#subcall}), never on the hub's
   * thread. {@link #open(Path)} starts a thread per call instead (for tests and tools).
   */
  public static WorkerHub open(Path socketPath, Executor blocking) throws IOException {
    if (socketPath.toString().getBytes(StandardCharsets.UTF_8).length > 107) {
      throw new IOException("socket path too long for a Unix socket: " + socketPath);
    }
    return new WorkerHub(socketPath, blocking);
  }

  public Path socketPath() {
    return socketPath;
  }

  /**
   * Registers a sandbox about to start.
   *
   * @param outputLimit bytes kept per stream per request (head and tail)
   * @param idleOutputMax bytes of output between requests past which the sandbox's other processes
   *     are stopped and its output is no longer read until the next request
   * @return the connection; hand its {@link #token(WorkerConnection)} to whoever connects
   */
  public WorkerConnection expect(String sandboxId, int outputLimit, long idleOutputMax) {
    WorkerConnection c =
        new WorkerConnection(
            sandboxId, WorkerConnection.newToken(), outputLimit, idleOutputMax, this);
    if (expected.putIfAbsent(sandboxId, c) != null) {
      throw new IllegalArgumentException("sandbox id already registered: " + sandboxId);
    }
    return c;
  }

  /** The one-time token the sandbox's hello lines must carry. */
  public static String token(WorkerConnection c) {
    return new String(c.token(), StandardCharsets.US_ASCII);
  }

  /** Number of connections registered and not yet closed. */
  public int size() {
    return expected.size();
  }

  /**
   * Opens a door for one sandbox: a listening socket of its own at {@code socket} (mode 0666, in a
   * directory the caller made and binds into the sandbox), through which the sandbox's runner
   * connects itself instead of inheriting connected sockets, as a container must. Connections
   * through it may only introduce themselves as {@code c} (with its token); it takes at most {@link
   * WorkerDoor#MAX_CONNECTIONS} and closes (its socket file deleted) once the runner is ready, when
   * the connection closes, or when the caller closes it, whichever comes first.
   */
  public WorkerDoor openDoor(WorkerConnection c, Path socket) throws IOException {
    if (socket.toString().getBytes(StandardCharsets.UTF_8).length > 107) {
      throw new IOException("socket path too long for a Unix socket: " + socket);
    }
    ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    WorkerDoor door = new WorkerDoor(this, c, socket, listener);
    try {
      Files.deleteIfExists(socket);
      listener.bind(UnixDomainSocketAddress.of(socket), WorkerDoor.MAX_CONNECTIONS);
      listener.configureBlocking(false);
      Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
    } catch (IOException | RuntimeException e) {
      door.close();
      throw e;
    }
    CompletableFuture<Void> registered = new CompletableFuture<>();
    execute(
        () -> {
          try {
            door.register(selector);
            registered.complete(null);
          } catch (IOException | RuntimeException e) {
            registered.completeExceptionally(e);
          }
        });
    try {
      registered.get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      door.close();
      throw new IOException("interrupted opening the door of " + c.sandboxId(), e);
    } catch (ExecutionException | TimeoutException e) {
      door.close();
      throw new IOException("cannot open the door of " + c.sandboxId() + ": " + e, e);
    }
    c.ready().whenComplete((r, err) -> door.close());
    c.closed().whenComplete((r, err) -> door.close());
    return door;
  }

  void forget(WorkerConnection c) {
    expected.remove(c.sandboxId(), c);
  }

  void execute(Runnable task) {
    if (Thread.currentThread() == thread) {
      task.run();
    } else {
      tasks.add(task);
      selector.wakeup();
    }
  }

  void wantWrite(SelectionKey key) {
    execute(
        () -> {
          if (key.isValid()) {
            key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
          }
        });
  }

  /** Starts or stops reading a socket (hub thread only). */
  void reading(SelectionKey key, boolean on) {
    if (key != null && key.isValid()) {
      int ops = key.interestOps();
      key.interestOps(on ? ops | SelectionKey.OP_READ : ops & ~SelectionKey.OP_READ);
    }
  }

  /** Where {@code llm_query} calls wait for their answers (never the hub's thread). */
  Executor blocking() {
    return blocking;
  }

  /** Runs a frame parse off the hub thread. */
  void parse(Runnable task) {
    parsers.execute(task);
  }

  void closeQuietly(SocketChannel channel) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        log.debug("closing a worker socket failed", e);
      }
    }
  }

  /** Reads everything a channel holds right now (hub thread only). */
  void drainNow(WorkerConnection c, RunnerSockets.Channel channel, SocketChannel socket) {
    if (socket == null || !socket.isOpen()) {
      return;
    }
    try {
      for (int total = 0; total < MAX_DRAIN_BYTES; ) {
        drainBuffer.clear();
        int n = socket.read(drainBuffer);
        if (n <= 0) {
          return;
        }
        total += n;
        drainBuffer.flip();
        c.onData(channel, drainBuffer);
      }
    } catch (IOException e) {
      log.debug("draining {} of {} failed", channel, c.sandboxId(), e);
    }
  }

  // -- the loop ----------------------------------------------------------------------------------

  private void loop() {
    while (running) {
      try {
        selector.select();
        Runnable task;
        while ((task = tasks.poll()) != null) {
          task.run();
        }
        for (SelectionKey key : selector.selectedKeys()) {
          try {
            handle(key);
          } catch (CancelledKeyException e) {
            // closed while we were looking at it
          }
        }
        selector.selectedKeys().clear();
      } catch (IOException | RuntimeException e) {
        if (running) {
          log.error("worker hub loop error", e);
        }
      }
    }
  }

  private void handle(SelectionKey key) throws IOException {
    if (key.isAcceptable()) {
      if (key.attachment() instanceof WorkerDoor door) {
        door.accept(selector);
        return;
      }
      SocketChannel s;
      while ((s = server.accept()) != null) {
        s.configureBlocking(false);
        s.register(selector, SelectionKey.OP_READ, new HelloReader.Hello(null));
      }
      return;
    }
    if (key.isWritable() && key.attachment() instanceof HelloReader.Endpoint e) {
      if (e.connection().flushWrites() && key.isValid()) {
        key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
      }
    }
    if (!key.isValid() || !key.isReadable()) {
      return;
    }
    SocketChannel s = (SocketChannel) key.channel();
    if (key.attachment() instanceof HelloReader.Hello hello) {
      hellos.read(key, s, hello);
      return;
    }
    HelloReader.Endpoint e = (HelloReader.Endpoint) key.attachment();
    readBuffer.clear();
    int n;
    try {
      n = s.read(readBuffer);
    } catch (IOException ex) {
      n = -1;
    }
    if (n < 0) {
      key.cancel();
      closeQuietly(s);
      e.connection().onEof(e.channel());
    } else if (n > 0) {
      readBuffer.flip();
      e.connection().onData(e.channel(), readBuffer);
    }
  }

  @Override
  public void close() {
    running = false;
    selector.wakeup();
    parsers.shutdownNow();
    try {
      thread.join(2000);
      for (SelectionKey key : selector.keys()) {
        key.channel().close();
      }
      selector.close();
      server.close();
      Files.deleteIfExists(socketPath);
    } catch (IOException e) {
      log.debug("closing the worker hub", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      log.debug("closing the worker hub", e);
    }
  }
}

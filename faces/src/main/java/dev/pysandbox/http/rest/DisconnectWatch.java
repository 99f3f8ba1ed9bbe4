package dev.pysandbox.http.rest;

import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.util.DaemonThreads;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.AbstractEndPoint;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices that the client of a request whose body has been read closed its connection while the
 * server works on the answer (a run in flight), so that the run it asked for can be cancelled
 * rather than go on for nobody.
 *
 * <p>Jetty 12 notices a closed connection only when it reads from it, and it reads nothing while a
 * request is handled once its body has been read: neither {@code Request.addFailureListener}, a
 * connection listener nor the servlet's read listener fires until the answer is written (tried on
 * Jetty 12.1 on Linux). So the watch asks the connection's end point itself to say when it is
 * readable (fill interest, which nothing else holds at that point): readable with nothing to read
 * is the client's FIN or reset. Bytes that do come (a pipelined next request) cannot be put back,
 * so the connection is then closed after this answer, as HTTP/1.1 lets a server close a pipeline.
 * The interest is withdrawn ({@link #close}) before the answer is written, before Jetty registers
 * its own for the next request. Over anything but HTTP/1.x, and where Jetty's internals are not
 * what is expected, there is no watch: nothing is noticed, nothing breaks.
 */
final class DisconnectWatch implements Callback, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DisconnectWatch.class);

  /** Runs what is done for a client that went away (a cancel, which waits for the run to stop). */
  private static final ExecutorService ACTIONS =
      Executors.newCachedThreadPool(DaemonThreads.named("pysandbox-rest-disconnect"));

  /** Ours, to tell our own withdrawal from a failure. */
  private static final class Withdrawn extends CancellationException {
    private static final long serialVersionUID = 1L;

    Withdrawn() {
      super("the watch was withdrawn");
    }
  }

  private final AbstractEndPoint endPoint;
  private final ByteBuffer probe = BufferUtil.allocate(1);

  // guarded by this
  private boolean registered;
  private boolean closed;
  private boolean readOther;

  /** Completes when the client has gone; what is done for it then runs on {@link #ACTIONS}. */
  private final CompletableFuture<Void> gone = new CompletableFuture<>();

  private DisconnectWatch(AbstractEndPoint endPoint) {
    this.endPoint = endPoint;
  }

  /**
   * Starts watching the connection of {@code request}, whose body must have been read to its end
   * (else nothing is watched: Jetty may still be reading it).
   */
  static DisconnectWatch start(HttpServletRequest request) {
    try {
      ServletContextRequest core = ServletContextRequest.getServletContextRequest(request);
      if (core == null || !request.getInputStream().isFinished()) {
        return new DisconnectWatch(null);
      }
      HttpVersion version = core.getConnectionMetaData().getHttpVersion();
      Connection connection = core.getConnectionMetaData().getConnection();
      EndPoint ep = connection == null ? null : connection.getEndPoint();
      if ((version != HttpVersion.HTTP_1_1 && version != HttpVersion.HTTP_1_0)
          || !(ep instanceof AbstractEndPoint endPoint)) {
        return new DisconnectWatch(null);
      }
      DisconnectWatch w = new DisconnectWatch(endPoint);
      synchronized (w) {
        w.registered = endPoint.tryFillInterested(w);
        if (!w.registered) {
          return new DisconnectWatch(null); // Jetty itself waits to read: not ours to take
        }
      }
      return w;
    } catch (IOException | RuntimeException e) {
      log.debug("no watch for the client's going away: {}", e.toString());
      return new DisconnectWatch(null);
    }
  }

  /**
   * Runs {@code onGone} once, on a thread of its own, when the client has gone; at once if it has
   * already. May be called once.
   */
  void onDisconnect(Runnable onGone) {
    gone.thenRunAsync(onGone, ACTIONS);
  }

  /** What a run's record says of a run cancelled because its client went away. */
  static final String REASON = "the client disconnected";

  /**
   * A listener that, told the id of the run the request started, cancels that run when the client
   * goes away ({@code cancel_run}, with {@link #REASON}).
   */
  RunListener cancelling(SandboxService service) {
    return runId -> onDisconnect(() -> cancel(service, runId));
  }

  /** Cancels {@code runId} for a client that went away; a run that ended meanwhile is left be. */
  static void cancel(SandboxService service, String runId) {
    try {
      CancelResult r = service.cancelRun(runId, REASON);
      log.info("run {}: its client disconnected; cancelled: {}", runId, r.status());
    } catch (RuntimeException e) {
      log.warn(
          "run {}: its client disconnected, and cancelling it failed: {}", runId, e.toString());
    }
  }

  /** Runs {@code action} on the thread that does what is done for clients that went away. */
  static void run(Runnable action) {
    ACTIONS.execute(action);
  }

  /** Whether the client closed the connection (as far as the watch saw). */
  boolean disconnected() {
    return gone.isDone();
  }

  /**
   * Whether the watch consumed bytes the client sent after its request (a pipelined request), so
   * that the connection must close after this answer.
   */
  synchronized boolean mustClose() {
    return readOther;
  }

  /** Readable: the client's end of the stream, or bytes of its next request. */
  @Override
  public void succeeded() {
    boolean clientGone = false;
    synchronized (this) {
      registered = false;
      if (closed || endPoint == null) {
        return;
      }
      int n;
      try {
        BufferUtil.clear(probe);
        n = endPoint.fill(probe);
      } catch (IOException e) {
        n = -1;
      }
      if (n < 0) {
        clientGone = true;
      } else if (n == 0) {
        registered = endPoint.tryFillInterested(this); // false: someone else reads now
      } else {
        readOther = true; // stop watching: what comes next is the next request's
      }
    }
    if (clientGone) {
      gone.complete(null);
    }
  }

  /** The interest failed: withdrawn by us, or the end point closed (the client is gone). */
  @Override
  public void failed(Throwable cause) {
    if (cause instanceof Withdrawn) {
      return;
    }
    synchronized (this) {
      registered = false;
      if (closed) {
        return;
      }
    }
    gone.complete(null);
  }

  @Override
  public InvocationType getInvocationType() {
    return InvocationType.NON_BLOCKING; // a non-blocking read; the action goes to its own thread
  }

  /**
   * Stops watching. Call before the answer is written: the connection is Jetty's again. Waits for a
   * look at the connection in progress (a non-blocking read).
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (registered) {
      // Registered and not yet called back: the interest held is ours (another registration
      // could not have taken its place), so failing it withdraws ours and no one else's.
      registered = false;
      endPoint.getFillInterest().onFail(new Withdrawn());
    }
  }
}

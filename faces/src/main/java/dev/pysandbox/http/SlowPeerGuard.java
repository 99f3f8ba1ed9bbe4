package dev.pysandbox.http;

import dev.pysandbox.util.DaemonThreads;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.io.Connection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cuts off peers too slow to be worth a thread: a request body that comes in at under {@code
 * http_min_data_rate} bytes a second, and an answer that a client takes at under it while the
 * server's write waits on it, measured over windows of {@link #GRACE}. A blocking read or write
 * holds its thread, and the connection's idle timeout only ends a peer that sends nothing at all:
 * one byte every few seconds keeps it alive for ever. A watchdog looks at every request once a
 * second and closes the connection of one that is too slow, which ends the blocked read or write
 * with an error (the request then ends as a broken one). Streams that only wait for the server to
 * speak (SSE, a long poll) are never cut for that: only a body still owed by the client, or a write
 * blocked on it, is measured.
 *
 * <p>Jetty's own {@code MinimumDataRateHandler} was not used: it measures the bytes of all requests
 * together (a statistics handler's counters), and checks only when a read is asked for.
 */
final class SlowPeerGuard extends HttpFilter {
  private static final long serialVersionUID = 1L;
  private static final Logger log = LoggerFactory.getLogger(SlowPeerGuard.class);

  /** How long a peer may be slow before it is measured (a connection starting, a pause). */
  static final Duration GRACE = Duration.ofSeconds(10);

  private final long minRate;
  private final long graceNanos;
  private final transient Set<Exchange> open = ConcurrentHashMap.newKeySet();
  private transient ScheduledExecutorService watchdog;

  /**
   * @param minRate bytes per second; 0 turns the guard off
   */
  SlowPeerGuard(long minRate, Duration grace) {
    this.minRate = minRate;
    this.graceNanos = grace.toNanos();
  }

  @Override
  public void init() {
    if (minRate > 0) {
      watchdog =
          Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("pysandbox-http-slow"));
      watchdog.scheduleWithFixedDelay(this::check, 1, 1, TimeUnit.SECONDS);
    }
  }

  @Override
  public void destroy() {
    if (watchdog != null) {
      watchdog.shutdownNow();
    }
  }

  @Override
  protected void doFilter(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (minRate <= 0) {
      chain.doFilter(request, response);
      return;
    }
    Exchange x = new Exchange(request, connection(request), System.nanoTime());
    open.add(x);
    boolean async = false;
    try {
      chain.doFilter(x.request(), x.response(response));
      if (request.isAsyncStarted()) {
        async = true;
        request.getAsyncContext().addListener(new AsyncDone(() -> open.remove(x)));
      }
    } finally {
      if (!async) {
        open.remove(x);
      }
    }
  }

  private static Connection connection(HttpServletRequest request) {
    try {
      ServletContextRequest core = ServletContextRequest.getServletContextRequest(request);
      return core == null ? null : core.getConnectionMetaData().getConnection();
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Once a second: closes the connections of exchanges whose peer is too slow. */
  void check() {
    long now = System.nanoTime();
    for (Exchange x : open) {
      String why = x.tooSlow(now);
      if (why != null) {
        open.remove(x);
        log.info(
            "{} {}: {}; the connection was closed (http_min_data_rate {} B/s, request {})",
            x.method,
            x.uri,
            why,
            minRate,
            x.requestId);
        x.abort();
      }
    }
  }

  /** Requests being watched now (for tests). */
  int watched() {
    return open.size();
  }

  /** One request: what its client has sent of the body, and what it has taken of the answer. */
  private final class Exchange {
    private final HttpServletRequest request;
    private final Connection connection;
    private final long started;
    private final long declared;
    final String method;
    final String uri;
    final Object requestId;
    private long read; // the servlet's thread only
    private volatile boolean bodyDone;
    private volatile long writingSince;
    // The window the watchdog measures (its thread only): since when, which way, bytes then.
    private long windowStart;
    private boolean windowIn;
    private long windowBytes;

    Exchange(HttpServletRequest request, Connection connection, long started) {
      this.request = request;
      this.connection = connection;
      this.started = started;
      this.declared = request.getContentLengthLong();
      this.method = request.getMethod();
      this.uri = request.getRequestURI();
      this.requestId = request.getAttribute(HttpFace.REQUEST_ID_ATTRIBUTE);
      boolean chunked = request.getHeader("Transfer-Encoding") != null;
      this.bodyDone = declared <= 0 && !chunked;
    }

    /**
     * Why the peer is too slow now, or null. While the client owes I/O — the rest of the body, or
     * room for a write that waits — the bytes the connection moved that way are measured over
     * windows of the grace; a window with fewer than the minimum's worth cuts the peer off. A
     * window, not the average since the start: a client that took megabytes at once and then a byte
     * a second would pass an average for hours.
     */
    String tooSlow(long now) {
      if (connection == null) {
        return null;
      }
      boolean in = !bodyDone;
      if (!in && writingSince == 0) {
        windowStart = 0;
        return null;
      }
      long bytes = in ? connection.getBytesIn() : connection.getBytesOut();
      if (windowStart == 0 || windowIn != in) {
        windowStart = now;
        windowIn = in;
        windowBytes = bytes;
        return null;
      }
      long span = now - windowStart;
      if (span < graceNanos) {
        return null;
      }
      long moved = bytes - windowBytes;
      if (moved * 1_000_000_000L < minRate * span) {
        return (in ? "the request body came at " : "the client took the answer at ")
            + moved * 1_000_000_000L / span
            + " B/s ("
            + moved
            + " bytes in "
            + span / 1_000_000_000L
            + " s)";
      }
      windowStart = now;
      windowBytes = bytes;
      return null;
    }

    void abort() {
      try {
        connection.getEndPoint().close();
      } catch (RuntimeException e) {
        log.debug("closing a slow connection: {}", e.toString());
      }
    }

    void countRead(int n) {
      if (n < 0) {
        bodyDone = true;
      } else {
        read += n;
        if (declared >= 0 && read >= declared) {
          bodyDone = true;
        }
      }
    }

    void beforeWrite() {
      writingSince = System.nanoTime();
    }

    void afterWrite() {
      writingSince = 0;
    }

    HttpServletRequest request() {
      return bodyDone ? request : new CountedBody(request, this::countRead);
    }

    HttpServletResponse response(HttpServletResponse response) {
      return new HttpServletResponseWrapper(response) {
        private ServletOutputStream out;

        @Override
        public ServletOutputStream getOutputStream() throws IOException {
          if (out == null) {
            out = new TimedOutput(super.getOutputStream());
          }
          return out;
        }
      };
    }

    /** The answer's stream: each write between this exchange's marks. */
    private final class TimedOutput extends ServletOutputStream {
      private final ServletOutputStream out;

      TimedOutput(ServletOutputStream out) {
        this.out = out;
      }

      @Override
      public void write(int b) throws IOException {
        timed(() -> out.write(b));
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        timed(() -> out.write(b, off, len));
      }

      @Override
      public void flush() throws IOException {
        timed(out::flush);
      }

      @Override
      public void close() throws IOException {
        timed(out::close);
      }

      /** One write to the peer, between the exchange's marks (a write that blocks is seen). */
      private void timed(Write write) throws IOException {
        beforeWrite();
        try {
          write.run();
        } finally {
          afterWrite();
        }
      }

      /** A write, flush or close of the stream underneath. */
      @FunctionalInterface
      private interface Write {
        void run() throws IOException;
      }

      @Override
      public boolean isReady() {
        return out.isReady();
      }

      @Override
      public void setWriteListener(WriteListener listener) {
        out.setWriteListener(listener);
      }
    }
  }
}

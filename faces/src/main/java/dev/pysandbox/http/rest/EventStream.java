package dev.pysandbox.http.rest;

import dev.pysandbox.api.EventSink;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.Subscription;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A run's (or an agent run's: {@link EventSource}) events written to an HTTP answer as they come,
 * one JSON object a line ({@code application/x-ndjson}) or as server-sent events ({@code
 * text/event-stream}: {@code id:} the event's number, {@code event:} its type). Written with the
 * servlet's non-blocking output: no thread waits on a client, whether the run is silent or the
 * client reads slowly — a slow client falls behind in the run's bounded buffer instead ({@code
 * lagged}). When there is something to write and the connection takes it, a drain runs on the
 * container's threads, one at a time per stream. A client that goes away ends the stream; the run
 * goes on, unless the stream was opened with something to do then ({@code onClientGone}: a streamed
 * POST /runs without {@code async_mode} cancels its run), which is done when a write fails or,
 * while the run is silent, when a {@link DisconnectWatch} sees the connection close.
 *
 * <p>{@code done} carries the same fields as the blocking answer, with its output cut to {@code
 * result_output_limit} the same way.
 */
final class EventStream implements EventSink, WriteListener, AsyncListener {
  private static final Logger log = LoggerFactory.getLogger(EventStream.class);
  private static final int BATCH = 64;

  /** Streams open now, for the heartbeat. */
  private static final Set<EventStream> OPEN = ConcurrentHashMap.newKeySet();

  /** How the events are written. */
  enum Format {
    NDJSON("application/x-ndjson", null),
    SSE("text/event-stream", ":\n\n");

    final String mediaType;

    /** What a stream with nothing to say sends, or {@code null}: a line of NDJSON must be JSON. */
    final byte[] heartbeat;

    Format(String mediaType, String heartbeat) {
      this.mediaType = mediaType;
      this.heartbeat = heartbeat == null ? null : heartbeat.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The stream the client's {@code Accept} asks for, or {@code null} for none (a plain JSON
     * answer).
     */
    static Format wanted(HttpServletRequest req) {
      String accept = req.getHeader("Accept");
      if (accept == null) {
        return null;
      }
      if (accept.contains(SSE.mediaType)) {
        return SSE;
      }
      return accept.contains(NDJSON.mediaType) ? NDJSON : null;
    }
  }

  private final Format format;
  private final AtomicInteger pending = new AtomicInteger();
  private volatile EventSource source;
  private volatile AsyncContext async;
  private volatile boolean heartbeatDue;
  private volatile boolean over;
  private final Runnable onClientGone;
  private final AtomicBoolean goneHandled = new AtomicBoolean();
  private volatile DisconnectWatch watch;

  // The drain's own (one drain at a time).
  private ServletOutputStream out;
  private byte[] unsent;
  private boolean flushDue;

  private EventStream(Format format, Runnable onClientGone) {
    this.format = format;
    this.onClientGone = onClientGone;
  }

  /**
   * Answers 200 and streams the events of the run subscription {@code attach} makes, {@code done}'s
   * output cut to {@code resultOutputLimit}: {@link #open(HttpServletRequest, HttpServletResponse,
   * Format, Function, Runnable)} of a run.
   */
  static void open(
      HttpServletRequest req,
      HttpServletResponse resp,
      Format format,
      int resultOutputLimit,
      Function<EventSink, Subscription> attach,
      Runnable onClientGone)
      throws IOException {
    open(
        req,
        resp,
        format,
        sink -> EventSource.of(attach.apply(sink), resultOutputLimit),
        onClientGone);
  }

  /**
   * Answers 200 and streams the events of the source {@code attach} makes. {@code attach} runs
   * first, so that what it refuses ({@code not_found}) is answered as any error; a source with
   * nothing left to give is answered 204.
   *
   * @param onClientGone run once, on a thread of its own, when the client goes away before the
   *     stream's end; {@code null} for nothing
   */
  static void open(
      HttpServletRequest req,
      HttpServletResponse resp,
      Format format,
      Function<EventSink, EventSource> attach,
      Runnable onClientGone)
      throws IOException {
    EventStream s = new EventStream(format, onClientGone);
    s.source = attach.apply(s);
    if (s.source.finished()) {
      // The client has every event, done included: 204 also stops an EventSource reconnecting.
      resp.setStatus(204);
      return;
    }
    try {
      resp.setStatus(200);
      resp.setContentType(format.mediaType + ";charset=utf-8");
      resp.setHeader("Cache-Control", "no-store");
      resp.setHeader("X-Accel-Buffering", "no");
      s.out = resp.getOutputStream();
      AsyncContext async = req.startAsync();
      async.setTimeout(0);
      async.addListener(s);
      s.async = async;
      OPEN.add(s);
      if (onClientGone != null) {
        DisconnectWatch w = DisconnectWatch.start(req);
        s.watch = w;
        w.onDisconnect(s::clientGone);
      }
      // The status and headers go out at once, before any event: an agent run may be silent for
      // as long as its model thinks, and a client waits for the headers before it reads.
      s.flushDue = true;
      // From here the container calls onWritePossible when the answer can be written.
      s.out.setWriteListener(s);
    } catch (RuntimeException | IOException e) {
      s.source.close();
      OPEN.remove(s);
      throw e;
    }
  }

  /**
   * Sends a heartbeat on every open SSE stream that has nothing else to send (a shared timer), so
   * that a client that went away is noticed while its run is silent.
   */
  static void heartbeatAll() {
    for (EventStream s : OPEN) {
      s.heartbeatDue = true;
      s.available();
    }
  }

  /** Streams open now. */
  static int openCount() {
    return OPEN.size();
  }

  @Override
  public void available() {
    AsyncContext a = async;
    if (a == null || over) {
      return; // onWritePossible comes once the stream is set up
    }
    if (pending.getAndIncrement() == 0) {
      try {
        a.start(this::drain);
      } catch (IllegalStateException e) {
        end(); // completed meanwhile
      }
    }
  }

  @Override
  public void onWritePossible() {
    if (pending.getAndIncrement() == 0) {
      drain();
    }
  }

  private void drain() {
    int missed = 1;
    while (true) {
      write();
      missed = pending.addAndGet(-missed);
      if (missed == 0) {
        return;
      }
    }
  }

  /** Writes while the connection takes it and there is something to write. */
  private void write() {
    try {
      while (!over && out.isReady()) {
        if (unsent != null) {
          byte[] b = unsent;
          unsent = null;
          out.write(b);
          flushDue = true;
        } else if (flushDue) {
          flushDue = false;
          out.flush();
        } else if (source.finished()) {
          end();
          async.complete();
        } else {
          List<EventSource.Event> batch = source.poll(BATCH);
          if (!batch.isEmpty()) {
            unsent = encode(batch);
            heartbeatDue = false;
          } else if (heartbeatDue && format.heartbeat != null) {
            heartbeatDue = false;
            unsent = format.heartbeat;
          } else {
            return; // the sink is told when there is more
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      log.debug("an event stream of {} ended: {}", source.name(), e.toString());
      end();
      completeQuietly();
      clientGoneSoon();
    }
  }

  /** The client went away (a write failed): what it asked for then is done, off this thread. */
  private void clientGoneSoon() {
    if (onClientGone != null && !goneHandled.get()) {
      DisconnectWatch.run(this::clientGone);
    }
  }

  /** The client went away before the stream's end: the stream ends, and what was asked is done. */
  private void clientGone() {
    if (onClientGone == null || !goneHandled.compareAndSet(false, true)) {
      return;
    }
    boolean finished = source.finished();
    end();
    completeQuietly();
    if (!finished) {
      onClientGone.run();
    }
  }

  private byte[] encode(List<EventSource.Event> batch) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (EventSource.Event e : batch) {
      byte[] json = Json.mapper().writeValueAsBytes(e.wire());
      if (format == Format.SSE) {
        b.write(
            ("id: " + e.seq() + "\nevent: " + e.type() + "\ndata: ")
                .getBytes(StandardCharsets.US_ASCII));
        b.write(json);
        b.write('\n');
        b.write('\n');
      } else {
        b.write(json);
        b.write('\n');
      }
    }
    return b.toByteArray();
  }

  /** The stream is over (written to its end, or the client went): the run goes on regardless. */
  private void end() {
    over = true;
    DisconnectWatch w = watch;
    if (w != null) {
      w.close(); // before the answer completes: the connection is Jetty's again
    }
    OPEN.remove(this);
    source.close();
  }

  private void completeQuietly() {
    try {
      async.complete();
    } catch (IllegalStateException e) {
      // already completed
    }
  }

  @Override
  public void onError(Throwable t) {
    log.debug("an event stream of {} failed: {}", source.name(), t.toString());
    end();
    completeQuietly();
    clientGoneSoon();
  }

  @Override
  public void onComplete(AsyncEvent event) {
    end();
  }

  @Override
  public void onTimeout(AsyncEvent event) {
    end();
    completeQuietly();
  }

  @Override
  public void onError(AsyncEvent event) {
    onError(event.getThrowable());
  }

  @Override
  public void onStartAsync(AsyncEvent event) {}
}

package dev.pysandbox.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * One SSE stream of an MCP session over Streamable HTTP: a POST's stream (the messages of one call,
 * ending with its answer) or the session's listening stream (GET). It outlives the HTTP response
 * that carries it: each message gets an event id ({@code <stream>_<seq>}), is kept in the session's
 * {@link ReplayBuffer}, and is written to the connection if one is attached. A connection that
 * drops leaves the stream running; {@link #resume} attaches a new one after replaying what followed
 * the client's last event id. The answer to a call its client cancelled is not sent (nor kept).
 */
final class SseStream implements McpStreamableServerTransport {
  private static final Logger log = LoggerFactory.getLogger(SseStream.class);

  /** How a resume went. */
  enum Resume {
    /** Replayed; attached, or ended after the replay when the stream had ended. */
    RESUMED,
    /** The stream has ended and the client has everything: nothing will come (answer 204). */
    ENDED,
    /** Something after the client's event id is no longer kept. */
    GONE
  }

  private final int number;
  private final ReplayBuffer buffer;
  private final ObjectMapper json;
  private final McpJsonMapper mapper;
  private final CallHandle call;
  private final Runnable onEnd;
  private long seq;
  private SseConnection connection;
  private boolean ended;

  /**
   * @param call the call a POST's stream answers (its answer is dropped once cancelled), or null
   * @param onEnd runs once when the stream ends
   */
  SseStream(
      int number,
      ReplayBuffer buffer,
      ObjectMapper json,
      McpJsonMapper mapper,
      CallHandle call,
      Runnable onEnd) {
    this.number = number;
    this.buffer = buffer;
    this.json = json;
    this.mapper = mapper;
    this.call = call;
    this.onEnd = onEnd;
  }

  int number() {
    return number;
  }

  String eventId(long s) {
    return number + "_" + s;
  }

  /**
   * Attaches the connection of the request that opened the stream. With {@code
   * primeWithRetryMillis} >= 0 it first gets the priming event (an id, empty data) and a {@code
   * retry} field, so that the client can resume even before the first message.
   */
  synchronized void attach(SseConnection c, long primeWithRetryMillis) {
    if (primeWithRetryMillis >= 0) {
      c.write(
          ("id: " + eventId(0) + "\nretry: " + primeWithRetryMillis + "\ndata: \n\n")
              .getBytes(StandardCharsets.UTF_8));
    }
    if (ended) {
      c.close();
    } else {
      connection = c;
    }
  }

  /**
   * Resumes after event {@code afterSeq}: replays what followed on a connection {@code open} makes,
   * then goes on there (or ends it, when the stream has ended). The connection attached so far, if
   * any, is closed first: a client resumes because it lost it.
   */
  Resume resume(long afterSeq, Supplier<SseConnection> open, long retryMillis) {
    SseConnection old;
    synchronized (this) {
      old = connection;
      connection = null;
    }
    if (old != null) {
      old.close();
    }
    synchronized (this) {
      List<byte[]> frames = afterSeq > seq ? null : buffer.after(number, afterSeq);
      if (frames == null) {
        return Resume.GONE;
      }
      if (ended && frames.isEmpty()) {
        return Resume.ENDED;
      }
      SseConnection c = open.get();
      boolean alive = c.write(("retry: " + retryMillis + "\n\n").getBytes(StandardCharsets.UTF_8));
      for (int i = 0; alive && i < frames.size(); i++) {
        alive = c.write(frames.get(i));
      }
      if (ended) {
        c.close();
      } else if (alive) {
        connection = c;
      }
      return Resume.RESUMED;
    }
  }

  synchronized boolean ended() {
    return ended;
  }

  synchronized boolean connected() {
    return connection != null && connection.isOpen();
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
    return sendMessage(message, null);
  }

  /** Sends with this stream's own event id: the SDK's {@code messageId} is not used. */
  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
    return Mono.fromRunnable(() -> send(message));
  }

  private void send(McpSchema.JSONRPCMessage message) {
    if (message instanceof McpSchema.JSONRPCResponse r && call != null && call.cancelled()) {
      log.debug("dropped the answer to cancelled request {}", r.id());
      return;
    }
    byte[] bytes;
    try {
      bytes =
          json.writeValueAsBytes(
              message instanceof McpSchema.JSONRPCResponse r
                  ? McpErrorSerializer.ownWords(r)
                  : message);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    synchronized (this) {
      if (ended) {
        log.debug("stream {} has ended; a message for it is dropped", number);
        return;
      }
      long s = ++seq;
      byte[] frame = SseConnection.frame(eventId(s), bytes);
      buffer.add(number, s, frame);
      if (connection != null && !connection.write(frame)) {
        log.debug("stream {}: the client's connection is gone; kept for a resume", number);
        connection = null;
      }
    }
  }

  @Override
  public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
    return mapper.convertValue(data, typeRef);
  }

  @Override
  public Mono<Void> closeGracefully() {
    return Mono.fromRunnable(this::close);
  }

  /** The stream has ended (its answer is sent, or its session ends): the connection is closed. */
  @Override
  public void close() {
    SseConnection c;
    synchronized (this) {
      if (ended) {
        return;
      }
      ended = true;
      buffer.addEnd(number, seq + 1);
      c = connection;
      connection = null;
    }
    if (c != null) {
      c.close();
    }
    onEnd.run();
  }
}

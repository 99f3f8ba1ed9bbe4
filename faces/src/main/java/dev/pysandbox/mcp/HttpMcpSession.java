package dev.pysandbox.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.util.TimeSource;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the Streamable HTTP transport keeps of one MCP session besides the SDK's session: its SSE
 * streams (numbered, each resumable while its events are kept), the calls in flight (so that the
 * client's {@code notifications/cancelled} reaches the right one, and only in this session) and the
 * replay buffer of its events.
 */
final class HttpMcpSession {
  private static final Logger log = LoggerFactory.getLogger(HttpMcpSession.class);

  private final McpStreamableServerSession sdk;
  private final String protocolVersion;
  private final ReplayBuffer buffer;
  private final ObjectMapper json;
  private final McpJsonMapper mapper;
  private final TimeSource time;
  private final AtomicInteger streamNumbers = new AtomicInteger();
  private final Map<Integer, SseStream> streams = new ConcurrentHashMap<>();
  private final Map<String, CallHandle> calls = new ConcurrentHashMap<>();
  private volatile long lastActiveNanos;

  HttpMcpSession(
      McpStreamableServerSession sdk,
      String protocolVersion,
      ReplayBuffer buffer,
      ObjectMapper json,
      McpJsonMapper mapper,
      TimeSource time) {
    this.sdk = sdk;
    this.protocolVersion = protocolVersion;
    this.buffer = buffer;
    this.json = json;
    this.mapper = mapper;
    this.time = time;
    this.lastActiveNanos = time.nanoTime();
  }

  String id() {
    return sdk.getId();
  }

  McpStreamableServerSession sdk() {
    return sdk;
  }

  /** The protocol version agreed at initialize. */
  String protocolVersion() {
    return protocolVersion;
  }

  /** A request or stream of this session came in now. */
  void touch() {
    lastActiveNanos = time.nanoTime();
  }

  /**
   * The stream that answers request {@code requestId}, whose client may cancel it through {@code
   * call}; null when a request with that id is still in flight in this session.
   */
  SseStream callStream(Object requestId, CallHandle call) {
    String key = InboundMessages.key(requestId);
    if (calls.putIfAbsent(key, call) != null) {
      return null;
    }
    int n = streamNumbers.incrementAndGet();
    SseStream s = new SseStream(n, buffer, json, mapper, call, () -> calls.remove(key, call));
    streams.put(n, s);
    return s;
  }

  /** A new listening stream (GET without {@code Last-Event-ID}). */
  SseStream listeningStream() {
    int n = streamNumbers.incrementAndGet();
    SseStream s = new SseStream(n, buffer, json, mapper, null, () -> {});
    streams.put(n, s);
    return s;
  }

  /** The stream of an event id this session gave ({@code <stream>_<seq>}), or null. */
  SseStream streamOf(String eventId) {
    int n = streamNumber(eventId);
    return n < 0 ? null : streams.get(n);
  }

  static int streamNumber(String eventId) {
    int cut = eventId == null ? -1 : eventId.indexOf('_');
    if (cut <= 0 || cut > 9) {
      return -1;
    }
    try {
      return Integer.parseInt(eventId.substring(0, cut));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The sequence number of an event id, or -1. */
  static long seqOf(String eventId) {
    int cut = eventId.indexOf('_');
    String tail = eventId.substring(cut + 1);
    if (tail.isEmpty() || tail.length() > 18 || !tail.chars().allMatch(Character::isDigit)) {
      return -1;
    }
    return Long.parseLong(tail);
  }

  /**
   * The client cancelled request {@code requestId}: its call's run is cancelled and its answer is
   * not sent. An id not in flight here (another session's, or answered already) changes nothing.
   *
   * @return whether a call was cancelled
   */
  boolean cancel(Object requestId) {
    CallHandle call = calls.get(InboundMessages.key(requestId));
    if (call == null) {
      log.debug("notifications/cancelled for {}, not in flight in MCP session {}", requestId, id());
      return false;
    }
    log.info("the client cancelled request {} of MCP session {}", requestId, id());
    call.cancel();
    return true;
  }

  int callsInFlight() {
    return calls.size();
  }

  /**
   * Drops what is no longer needed: events past the age bound, and ended streams none of whose
   * events is kept.
   */
  void tidy() {
    buffer.expire();
    streams
        .values()
        .removeIf(
            s -> {
              if (s.ended() && !buffer.holds(s.number())) {
                buffer.forget(s.number());
                return true;
              }
              return false;
            });
  }

  /** True when nothing is in flight or connected and nothing came for {@code idleNanos}. */
  boolean idle(long idleNanos) {
    return calls.isEmpty()
        && streams.values().stream().noneMatch(SseStream::connected)
        && time.nanoTime() - lastActiveNanos > idleNanos;
  }

  /**
   * The session ends (DELETE, idle, or the server stops): its calls in flight are cancelled, as a
   * client's cancel would, its streams end and its events are dropped.
   */
  void end() {
    List.copyOf(calls.values()).forEach(CallHandle::cancel);
    List.copyOf(streams.values()).forEach(SseStream::close);
    streams.clear();
    buffer.clear();
  }

  ReplayBuffer buffer() {
    return buffer;
  }
}

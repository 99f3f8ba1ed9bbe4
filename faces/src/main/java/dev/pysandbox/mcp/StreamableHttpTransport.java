package dev.pysandbox.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.util.DaemonThreads;
import dev.pysandbox.util.TimeSource;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * The MCP sessions over Streamable HTTP, in place of the SDK 2.1.0's servlet transport, which keeps
 * no event store (its {@code replay} answers nothing, every answer's event id is the session id, no
 * priming event, no {@code retry}) and has no handler for {@code notifications/cancelled}. The
 * SDK's own session ({@link McpStreamableServerSession}, made by the server's factory) still does
 * the protocol: initialize, dispatch, server-to-client requests. This keeps beside each one an
 * {@link HttpMcpSession}: resumable streams, calls in flight, a bounded replay buffer.
 *
 * <p>One timer thread tidies every {@link #TIDY_MILLIS}: events past their age go, and a session
 * with nothing in flight, nothing connected and no request for {@link #IDLE_MILLIS} is ended (as
 * the SDK's transport sweeps idle sessions), so that a client that vanished without a DELETE costs
 * nothing for long.
 */
final class StreamableHttpTransport implements McpStreamableServerTransportProvider {
  private static final Logger log = LoggerFactory.getLogger(StreamableHttpTransport.class);

  /** The protocol versions spoken over Streamable HTTP (the transport came with 2025-03-26). */
  static final List<String> PROTOCOL_VERSIONS = List.of("2025-03-26", "2025-06-18", "2025-11-25");

  /** The first version whose clients take a priming event (empty data) and resume POST streams. */
  static final String RESUMABLE_SINCE = "2025-11-25";

  /** The {@code retry} sent to clients: how long to wait before reconnecting a dropped stream. */
  static final long RETRY_MILLIS = 1_000;

  /** Replay bounds, per MCP session: events, bytes and age; and bytes of all sessions together. */
  static final int REPLAY_MAX_EVENTS = 1_000;

  static final long REPLAY_MAX_BYTES = 4L << 20;
  static final long REPLAY_MAX_AGE_MILLIS = 5 * 60_000L;
  static final long REPLAY_MAX_BYTES_ALL = 64L << 20;

  static final long TIDY_MILLIS = 10_000;
  static final long IDLE_MILLIS = 30 * 60_000L;

  private final ObjectMapper json;
  private final McpJsonMapper mapper;
  private final TimeSource time;
  private final ReplayBuffer.Budget budget = new ReplayBuffer.Budget(REPLAY_MAX_BYTES_ALL);
  private final Map<String, HttpMcpSession> sessions = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer;
  private volatile McpStreamableServerSession.Factory factory;
  private volatile Consumer<String> onSessionEnd = id -> {};
  private volatile boolean closing;

  StreamableHttpTransport(ObjectMapper json, McpJsonMapper mapper, TimeSource time) {
    this.json = json;
    this.mapper = mapper;
    this.time = time;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("pysandbox-mcp-http-tidy"));
    timer.scheduleWithFixedDelay(this::tidySafely, TIDY_MILLIS, TIDY_MILLIS, TimeUnit.MILLISECONDS);
  }

  /** Runs with a session's id when it ends, however it ends (DELETE, idle, stop). */
  void onSessionEnd(Consumer<String> action) {
    this.onSessionEnd = action;
  }

  @Override
  public void setSessionFactory(McpStreamableServerSession.Factory sessionFactory) {
    this.factory = sessionFactory;
  }

  @Override
  public List<String> protocolVersions() {
    return PROTOCOL_VERSIONS;
  }

  boolean closing() {
    return closing;
  }

  /**
   * Starts a session for an {@code initialize} request.
   *
   * @return the session and the result to answer with
   */
  Started start(McpSchema.InitializeRequest request) {
    McpStreamableServerSession.McpStreamableServerSessionInit init = factory.startSession(request);
    McpSchema.InitializeResult result = init.initResult().block();
    String version = result == null ? PROTOCOL_VERSIONS.get(0) : result.protocolVersion();
    HttpMcpSession session =
        new HttpMcpSession(
            init.session(),
            version,
            new ReplayBuffer(
                REPLAY_MAX_EVENTS, REPLAY_MAX_BYTES, REPLAY_MAX_AGE_MILLIS, budget, time),
            json,
            mapper,
            time);
    sessions.put(session.id(), session);
    return new Started(session, result);
  }

  record Started(HttpMcpSession session, McpSchema.InitializeResult result) {}

  /** The live session with this id, or null. */
  HttpMcpSession session(String id) {
    HttpMcpSession s = id == null ? null : sessions.get(id);
    if (s != null) {
      s.touch();
    }
    return s;
  }

  /**
   * Ends a session (the client's DELETE): its calls are cancelled, its streams end.
   *
   * @return false when there was no such session
   */
  boolean end(String id) {
    HttpMcpSession s = sessions.remove(id);
    if (s == null) {
      return false;
    }
    endQuietly(s);
    return true;
  }

  /** How a session's priming decision is made: only clients of a version that resumes get one. */
  static long primeRetry(HttpMcpSession session) {
    return session.protocolVersion().compareTo(RESUMABLE_SINCE) >= 0 ? RETRY_MILLIS : -1;
  }

  /** Why a resume after event {@code lastEventId} cannot be served. */
  static String gone(String lastEventId) {
    return "Gone: cannot resume after event '"
        + lastEventId
        + "': this session has no such event, or what followed it is no longer kept (a session"
        + " keeps its last "
        + REPLAY_MAX_EVENTS
        + " events, "
        + (REPLAY_MAX_BYTES >> 20)
        + " MiB, for "
        + REPLAY_MAX_AGE_MILLIS / 60_000
        + " min); a run's outcome stays in its record (get_run, list_runs)";
  }

  @Override
  public Mono<Void> notifyClients(String method, Object params) {
    return Mono.fromRunnable(
        () ->
            sessions
                .values()
                .forEach(
                    s -> {
                      try {
                        s.sdk().sendNotification(method, params).block();
                      } catch (RuntimeException e) {
                        log.debug("notifying MCP session {} failed: {}", s.id(), e.toString());
                      }
                    }));
  }

  @Override
  public Mono<Void> notifyClient(String sessionId, String method, Object params) {
    return Mono.defer(
        () -> {
          HttpMcpSession s = sessions.get(sessionId);
          return s == null ? Mono.empty() : s.sdk().sendNotification(method, params);
        });
  }

  @Override
  public Mono<Void> closeGracefully() {
    return Mono.fromRunnable(this::close);
  }

  /** Ends every session; new requests are refused from now on. */
  @Override
  public void close() {
    closing = true;
    timer.shutdownNow();
    List.copyOf(sessions.keySet()).forEach(this::end);
  }

  /** For tests and the log: the sessions held now. */
  int sessionCount() {
    return sessions.size();
  }

  /** For tests: the bytes kept for replay by every session together. */
  long replayBytes() {
    return budget.used();
  }

  /** Expires old events, and ends the sessions idle for {@link #IDLE_MILLIS}. */
  void tidy() {
    long idleNanos = TimeUnit.MILLISECONDS.toNanos(IDLE_MILLIS);
    for (HttpMcpSession s : List.copyOf(sessions.values())) {
      s.tidy();
      if (s.idle(idleNanos) && sessions.remove(s.id(), s)) {
        log.info("MCP session {} was idle for {} min; ended", s.id(), IDLE_MILLIS / 60_000);
        endQuietly(s);
      }
    }
  }

  private void tidySafely() {
    try {
      tidy();
    } catch (RuntimeException e) {
      log.warn("tidying the MCP sessions failed: {}", e.toString());
    }
  }

  private void endQuietly(HttpMcpSession s) {
    try {
      s.end();
      s.sdk().closeGracefully().block();
    } catch (RuntimeException e) {
      log.warn("ending MCP session {}: {}", s.id(), e.toString());
    } finally {
      onSessionEnd.accept(s.id());
    }
  }
}

package dev.pysandbox.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.util.DaemonThreads;
import dev.pysandbox.util.Pause;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * MCP over stdio, in place of the SDK's {@code StdioServerTransportProvider}, which loses the
 * connection for good when two threads answer at once, when one line is not JSON, or when a message
 * is over 16 MB, and which ignores {@code notifications/cancelled}. Here:
 *
 * <ul>
 *   <li>one reader thread reads bounded lines; a malformed one is answered (-32700, -32600, -32602,
 *       in our words, with its id when it can be read) and reading goes on; a message over the
 *       limit is skipped, not buffered, and answered;
 *   <li>each request is handled on the call executor, so a long run never delays another call;
 *   <li>every outgoing message is serialised by its sender and written by one writer thread, in
 *       order, so concurrent answers can never interleave or fail;
 *   <li>{@code notifications/cancelled} cancels the call (its handler decides what that means) and
 *       its answer is not sent, as the protocol asks;
 *   <li>an id already in flight is refused, so answers and cancels can never be confused;
 *   <li>end of input completes {@link #closed()}; the owner shuts the server down.
 * </ul>
 */
final class StdioTransport implements McpServerTransportProvider {
  private static final Logger log = LoggerFactory.getLogger(StdioTransport.class);
  private static final byte[] STOP = new byte[0];

  private final ObjectMapper json;
  private final McpJsonMapper mapper;
  private final InboundMessages inbound;
  private final InputStream in;
  private final OutputStream out;
  private final int maxMessageBytes;
  private final ExecutorService calls;
  private final Map<String, CallHandle> inFlight = new ConcurrentHashMap<>();
  private final BlockingQueue<byte[]> outbound = new LinkedBlockingQueue<>(16_384);
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private final AtomicInteger pendingWrites = new AtomicInteger();
  private volatile McpServerSession session;
  private volatile LoggingAsked logging;
  private volatile ResourceMethods resources;
  private volatile boolean outputBroken;

  /**
   * @param json reads what the client sends and writes what the server answers; its read
   *     constraints must admit {@code maxMessageBytes}
   * @param calls runs each request's handler (the SDK is told to execute handlers immediately, on
   *     the thread that subscribes)
   */
  StdioTransport(
      ObjectMapper json,
      McpJsonMapper mapper,
      InboundMessages inbound,
      InputStream in,
      OutputStream out,
      int maxMessageBytes,
      ExecutorService calls) {
    this.json = json;
    this.mapper = mapper;
    this.inbound = inbound;
    this.in = in;
    this.out = out;
    this.maxMessageBytes = maxMessageBytes;
    this.calls = calls;
  }

  /**
   * Answers the resource methods the SDK cannot serve ({@link ResourceMethods}) here instead of
   * handing them to the session; to be set before the server is built.
   */
  /** Tells {@code asked} when the client sets a logging level. */
  void recordLoggingIn(LoggingAsked asked) {
    this.logging = asked;
  }

  void answerResourcesWith(ResourceMethods methods) {
    this.resources = methods;
  }

  @Override
  public void setSessionFactory(McpServerSession.Factory sessionFactory) {
    this.session = sessionFactory.create(new SessionTransport());
    DaemonThreads.newThread("pysandbox-stdout", this::writeLoop).start();
    DaemonThreads.newThread("pysandbox-stdin", this::readLoop).start();
  }

  /** Completes when the client closed our input (or it broke). */
  CompletableFuture<Void> closed() {
    return closed;
  }

  /**
   * Waits until every answer queued so far is written, at most {@code timeoutMillis}.
   *
   * @return true when nothing is left to write
   */
  boolean flush(long timeoutMillis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (pendingWrites.get() > 0 && !outputBroken && System.nanoTime() < deadline) {
      Pause.millis(2);
    }
    return pendingWrites.get() == 0;
  }

  /** Waits up to {@code timeoutMillis} for the requests in flight to be answered. */
  boolean awaitAnswers(long timeoutMillis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (!inFlight.isEmpty() && System.nanoTime() < deadline) {
      Pause.millis(2);
    }
    return inFlight.isEmpty();
  }

  @Override
  public Mono<Void> notifyClients(String method, Object params) {
    return session == null ? Mono.empty() : session.sendNotification(method, params);
  }

  /** The one session is the only client: a notification for it is sent, any other dropped. */
  @Override
  public Mono<Void> notifyClient(String sessionId, String method, Object params) {
    McpServerSession s = session;
    return s != null && s.getId().equals(sessionId)
        ? s.sendNotification(method, params)
        : Mono.empty();
  }

  @Override
  public Mono<Void> closeGracefully() {
    return Mono.fromRunnable(this::close);
  }

  /** Stops the writer once what is queued is written. */
  @Override
  public void close() {
    outbound.offer(STOP);
  }

  // -- reading -----------------------------------------------------------------------------------

  private void readLoop() {
    LineReader lines = new LineReader(in, maxMessageBytes);
    try {
      LineReader.Line line;
      while ((line = lines.next()) != null) {
        try {
          accept(line);
        } catch (RuntimeException e) {
          log.error("could not handle a message from the client", e);
          answerError(
              null, McpSchema.ErrorCodes.INTERNAL_ERROR, "Internal error reading a message");
        }
      }
      log.debug("the client closed stdin");
    } catch (IOException e) {
      log.warn("reading stdin failed: {}", e.getMessage());
    } finally {
      closed.complete(null);
    }
  }

  private void accept(LineReader.Line line) {
    if (line.oversized()) {
      Object id = inbound.idFromHead(line.bytes(), line.length());
      log.warn("refused a message of {} bytes (limit {})", line.totalBytes(), maxMessageBytes);
      answerError(
          id,
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Invalid Request: the message is "
              + line.totalBytes()
              + " bytes, over the limit of "
              + maxMessageBytes
              + " bytes (about 4/3 of upload_max_bytes, plus 1 MiB); nothing of it was done");
      return;
    }
    InboundMessages.Inbound parsed = inbound.parse(line.bytes(), line.length());
    if (parsed instanceof InboundMessages.Invalid bad) {
      log.debug("answered a bad message with {}: {}", bad.code(), bad.message());
      answerError(bad.id(), bad.code(), bad.message());
      return;
    }
    InboundMessages.Message m = (InboundMessages.Message) parsed;
    if (m.message() instanceof McpSchema.JSONRPCNotification n
        && "notifications/cancelled".equals(n.method())) {
      cancel(n);
      return;
    }
    if (m.id() == null) {
      dispatch(m.message(), McpTransportContext.EMPTY);
      return;
    }
    String key = InboundMessages.key(m.id());
    CallHandle call = new CallHandle(calls);
    if (inFlight.putIfAbsent(key, call) != null) {
      answerError(
          m.id(),
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Invalid Request: id " + m.id() + " is already used by a request still in flight");
      return;
    }
    McpTransportContext context = McpTransportContext.create(Map.of(CallHandle.CONTEXT_KEY, call));
    LoggingAsked asked = logging;
    if (asked != null) {
      asked.saw(session.getId(), m.method());
    }
    ResourceMethods here = resources;
    try {
      if (here != null && ResourceMethods.handles(m.method())) {
        calls.execute(
            () ->
                sendQuietly(
                    here.answer(context, session.getId(), (McpSchema.JSONRPCRequest) m.message())));
      } else {
        calls.execute(() -> dispatch(m.message(), context));
      }
    } catch (RejectedExecutionException e) {
      inFlight.remove(key);
      answerError(m.id(), -32000, "Server busy: too many requests are waiting; try again shortly");
    }
  }

  private void dispatch(McpSchema.JSONRPCMessage message, McpTransportContext context) {
    session
        .handle(message)
        .contextWrite(ctx -> ctx.put(McpTransportContext.KEY, context))
        .subscribe(
            null,
            e ->
                log.warn(
                    "handling {} failed: {}", InboundMessages.describe(message), e.toString()));
  }

  private void sendQuietly(McpSchema.JSONRPCMessage message) {
    try {
      send(message);
    } catch (IOException e) {
      log.error("cannot encode an answer", e);
    }
  }

  private void cancel(McpSchema.JSONRPCNotification n) {
    Object requestId = n.params() instanceof Map<?, ?> p ? p.get("requestId") : null;
    if (!(requestId instanceof String || requestId instanceof Number)) {
      log.debug("ignored notifications/cancelled without a usable requestId: {}", n.params());
      return;
    }
    CallHandle call = inFlight.get(InboundMessages.key(requestId));
    if (call == null) {
      log.debug("notifications/cancelled for {}, which is not in flight", requestId);
      return;
    }
    log.info("the client cancelled request {}", requestId);
    call.cancel();
  }

  // -- writing -----------------------------------------------------------------------------------

  private void answerError(Object id, int code, String message) {
    ObjectNode msg = json.createObjectNode();
    msg.put("jsonrpc", "2.0");
    if (id == null) {
      msg.putNull("id");
    } else {
      msg.set("id", json.valueToTree(id));
    }
    ObjectNode error = msg.putObject("error");
    error.put("code", code);
    error.put("message", message);
    try {
      enqueue(json.writeValueAsBytes(msg));
    } catch (IOException e) {
      log.error("cannot encode an error answer", e);
    }
  }

  private void send(McpSchema.JSONRPCMessage message) throws IOException {
    if (!(message instanceof McpSchema.JSONRPCResponse r) || r.id() == null) {
      enqueue(json.writeValueAsBytes(message));
      return;
    }
    String key = InboundMessages.key(r.id());
    CallHandle call = inFlight.get(key);
    try {
      if (call != null && call.cancelled()) {
        log.debug("dropped the answer to cancelled request {}", r.id());
        return;
      }
      enqueue(json.writeValueAsBytes(McpErrorSerializer.ownWords(r)));
    } finally {
      // Only once queued: whoever waits for the answers (see awaitAnswers, flush) sees either the
      // request in flight or its answer waiting to be written, never neither.
      inFlight.remove(key);
    }
  }

  private void enqueue(byte[] bytes) {
    if (outputBroken) {
      return;
    }
    pendingWrites.incrementAndGet();
    try {
      outbound.put(bytes);
    } catch (InterruptedException e) {
      pendingWrites.decrementAndGet();
      Thread.currentThread().interrupt();
    }
  }

  private void writeLoop() {
    try {
      while (true) {
        byte[] next = outbound.take();
        int written = 0;
        // Write whatever is queued, then flush once.
        while (next != null && next != STOP) {
          out.write(next);
          out.write('\n');
          written++;
          next = outbound.poll();
        }
        out.flush();
        pendingWrites.addAndGet(-written);
        if (next == STOP) {
          // Answers queued after the stop (a handler that finished just now) still go out.
          while ((next = outbound.poll()) != null) {
            if (next != STOP) {
              out.write(next);
              out.write('\n');
              pendingWrites.decrementAndGet();
            }
          }
          out.flush();
          return;
        }
      }
    } catch (IOException e) {
      outputBroken = true;
      log.warn("writing to stdout failed ({}); the client is gone", e.getMessage());
      outbound.clear();
      pendingWrites.set(0);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The session's side: what the SDK sends goes through {@link #send}. */
  private final class SessionTransport implements McpServerTransport {
    @Override
    public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
      return Mono.fromRunnable(
          () -> {
            try {
              send(message);
            } catch (IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          });
    }

    @Override
    public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
      return mapper.convertValue(data, typeRef);
    }

    @Override
    public Mono<Void> closeGracefully() {
      return Mono.empty();
    }

    @Override
    public void close() {
      // the connection ends with stdin; nothing to do for the session
    }
  }
}

package dev.pysandbox.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.server.McpTransportContextExtractor;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MCP over Streamable HTTP at {@code /mcp}: checks each request at the edge and hands it to the
 * {@link StreamableHttpTransport}. A body is read once (bounded) and classified by {@link
 * InboundMessages}, as stdio does, so both faces answer a bad message alike and in our words:
 * -32700 for what is not JSON, -32600 for what is not JSON-RPC, -32602 naming an unknown tool. A
 * request refused here, and a resource method ({@link ResourceMethods}), is answered with JSON; a
 * call is answered on a resumable SSE stream ({@link SseStream}). An unsupported {@code
 * MCP-Protocol-Version} is 400. {@code notifications/cancelled} cancels the call of that id in the
 * same session; a {@code GET} with {@code Last-Event-ID} resumes a stream; a {@code DELETE} ends
 * the session and cancels its calls.
 */
final class McpHttpFront extends HttpServlet {
  private static final long serialVersionUID = 1L;
  private static final Logger log = LoggerFactory.getLogger(McpHttpFront.class);
  static final String SESSION_HEADER = "Mcp-Session-Id";
  static final String VERSION_HEADER = "MCP-Protocol-Version";
  static final String LAST_EVENT_HEADER = "Last-Event-ID";

  /** A resource request larger than this is refused: they are small. */
  static final int HEAD_BYTES = 64 * 1024;

  private final transient StreamableHttpTransport transport;
  private final transient ObjectMapper json;
  private final transient McpJsonMapper mapper;
  private final transient InboundMessages inbound;
  private final transient McpTransportContextExtractor<HttpServletRequest> context;
  private final transient ResourceMethods methods;
  private final transient LoggingAsked logging;
  private final transient Executor cancels;
  private final int maxMessageBytes;

  McpHttpFront(
      StreamableHttpTransport transport,
      ObjectMapper json,
      McpJsonMapper mapper,
      InboundMessages inbound,
      McpTransportContextExtractor<HttpServletRequest> context,
      ResourceMethods methods,
      LoggingAsked logging,
      Executor cancels,
      int maxMessageBytes) {
    this.transport = transport;
    this.json = json;
    this.mapper = mapper;
    this.inbound = inbound;
    this.context = context;
    this.methods = methods;
    this.logging = logging;
    this.cancels = cancels;
    this.maxMessageBytes = maxMessageBytes;
  }

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    if (transport.closing()) {
      error(response, 503, null, -32000, "Server is shutting down; connect to another one");
      return;
    }
    String version = request.getHeader(VERSION_HEADER);
    if (version != null && !StreamableHttpTransport.PROTOCOL_VERSIONS.contains(version)) {
      error(
          response,
          400,
          null,
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Bad Request: unsupported "
              + VERSION_HEADER
              + " '"
              + abbreviate(version)
              + "'; this server speaks "
              + String.join(", ", StreamableHttpTransport.PROTOCOL_VERSIONS));
      return;
    }
    switch (request.getMethod()) {
      case "POST" -> post(request, response);
      case "GET" -> get(request, response);
      case "DELETE" -> delete(request, response);
      default -> {
        // the server's one error shape for HTTP errors that are not MCP messages
        response.setHeader("Allow", "GET, POST, DELETE");
        response.sendError(HttpServletResponse.SC_METHOD_NOT_ALLOWED);
      }
    }
  }

  // -- POST: a message from the client ----------------------------------------------------------

  private void post(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String accept = String.valueOf(request.getHeader("Accept"));
    if (!accept.contains("application/json") || !accept.contains("text/event-stream")) {
      error(
          response,
          406,
          null,
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Not Acceptable: a POST must accept both application/json and text/event-stream");
      return;
    }
    String type = String.valueOf(request.getContentType()).toLowerCase(java.util.Locale.ROOT);
    if (!type.startsWith("application/json")) {
      error(
          response,
          415,
          null,
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Unsupported Media Type: Content-Type must be application/json");
      return;
    }
    byte[] body = request.getInputStream().readNBytes(maxMessageBytes + 1);
    if (body.length > maxMessageBytes) {
      response.setHeader("Connection", "close");
      error(
          response,
          413,
          inbound.idFromHead(body, Math.min(body.length, HEAD_BYTES)),
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Invalid Request: the message is over the limit of "
              + maxMessageBytes
              + " bytes (about 4/3 of upload_max_bytes, plus 1 MiB); nothing of it was done");
      return;
    }
    InboundMessages.Inbound parsed = inbound.parse(body, body.length);
    if (parsed instanceof InboundMessages.Invalid bad) {
      // A request whose id could be read gets a JSON-RPC answer; what is not one is a bad request.
      error(response, bad.id() == null ? 400 : 200, bad.id(), bad.code(), bad.message());
      return;
    }
    InboundMessages.Message m = (InboundMessages.Message) parsed;
    if (m.message() instanceof McpSchema.JSONRPCRequest r
        && McpSchema.METHOD_INITIALIZE.equals(r.method())) {
      initialize(response, r);
      return;
    }
    HttpMcpSession session = session(request, response, m.id());
    if (session == null) {
      return;
    }
    logging.saw(session.id(), m.method());
    McpTransportContext ctx = context.extract(request);
    if (m.message() instanceof McpSchema.JSONRPCResponse r) {
      answerToServer(response, session, r, ctx);
    } else if (m.message() instanceof McpSchema.JSONRPCNotification n) {
      if ("notifications/cancelled".equals(n.method())) {
        Object id = n.params() instanceof Map<?, ?> p ? p.get("requestId") : null;
        if (id instanceof String || id instanceof Number) {
          session.cancel(id instanceof Number num ? normalise(num) : id);
        }
      } else {
        session.sdk().accept(n).contextWrite(c -> c.put(McpTransportContext.KEY, ctx)).block();
      }
      response.setStatus(HttpServletResponse.SC_ACCEPTED);
    } else {
      McpSchema.JSONRPCRequest r = (McpSchema.JSONRPCRequest) m.message();
      if (ResourceMethods.handles(r.method())) {
        answer(
            response,
            body.length > HEAD_BYTES
                ? McpSchema.JSONRPCResponse.error(
                    r.id(),
                    new McpSchema.JSONRPCResponse.JSONRPCError(
                        McpSchema.ErrorCodes.INVALID_REQUEST,
                        "Invalid Request: a "
                            + r.method()
                            + " request of over "
                            + HEAD_BYTES
                            + " bytes",
                        null))
                : methods.answer(ctx, session.id(), r));
      } else {
        call(request, response, session, r, ctx);
      }
    }
  }

  private void initialize(HttpServletResponse response, McpSchema.JSONRPCRequest r)
      throws IOException {
    McpSchema.InitializeRequest init =
        mapper.convertValue(r.params(), new TypeRef<McpSchema.InitializeRequest>() {});
    StreamableHttpTransport.Started started = transport.start(init);
    response.setHeader(SESSION_HEADER, started.session().id());
    answer(response, McpSchema.JSONRPCResponse.result(r.id(), started.result()));
  }

  private void answerToServer(
      HttpServletResponse response,
      HttpMcpSession session,
      McpSchema.JSONRPCResponse r,
      McpTransportContext ctx)
      throws IOException {
    try {
      session.sdk().accept(r).contextWrite(c -> c.put(McpTransportContext.KEY, ctx)).block();
      response.setStatus(HttpServletResponse.SC_ACCEPTED);
    } catch (RuntimeException e) {
      error(
          response,
          400,
          null,
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Invalid Request: the server asked nothing with id " + r.id() + " in this session");
    }
  }

  /** A call: answered on an SSE stream that a client may drop and resume. */
  private void call(
      HttpServletRequest request,
      HttpServletResponse response,
      HttpMcpSession session,
      McpSchema.JSONRPCRequest r,
      McpTransportContext ctx)
      throws IOException {
    CallHandle call = new CallHandle(cancels);
    SseStream stream = session.callStream(r.id(), call);
    if (stream == null) {
      error(
          response,
          400,
          r.id(),
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Invalid Request: id " + r.id() + " is already used by a request still in flight");
      return;
    }
    stream.attach(
        SseConnection.open(request, response), StreamableHttpTransport.primeRetry(session));
    McpTransportContext withCall = new CallContext(ctx, call);
    try {
      session
          .sdk()
          .responseStream(stream)
          .handle(r)
          .contextWrite(c -> c.put(McpTransportContext.KEY, withCall))
          .block();
    } catch (RuntimeException e) {
      log.warn("handling {} #{} failed: {}", r.method(), r.id(), e.toString());
      stream.close();
    }
  }

  // -- GET: the listening stream, or a resume -------------------------------------------------

  private void get(HttpServletRequest request, HttpServletResponse response) throws IOException {
    if (!String.valueOf(request.getHeader("Accept")).contains("text/event-stream")) {
      error(
          response,
          406,
          null,
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Not Acceptable: a GET must accept text/event-stream");
      return;
    }
    HttpMcpSession session = session(request, response, null);
    if (session == null) {
      return;
    }
    String last = request.getHeader(LAST_EVENT_HEADER);
    if (last == null) {
      SseStream stream = session.listeningStream();
      stream.attach(
          SseConnection.open(request, response), StreamableHttpTransport.primeRetry(session));
      session.sdk().listeningStream(stream);
      return;
    }
    SseStream stream = session.streamOf(last);
    long seq = stream == null ? -1 : HttpMcpSession.seqOf(last);
    SseStream.Resume outcome =
        seq < 0
            ? SseStream.Resume.GONE
            : stream.resume(
                seq,
                () -> {
                  try {
                    return SseConnection.open(request, response);
                  } catch (IOException e) {
                    throw new UncheckedIOException(e);
                  }
                },
                StreamableHttpTransport.RETRY_MILLIS);
    switch (outcome) {
      case RESUMED -> log.debug("MCP session {} resumed after event {}", session.id(), last);
      case ENDED -> response.setStatus(HttpServletResponse.SC_NO_CONTENT);
      case GONE ->
          error(response, 410, null, -32000, StreamableHttpTransport.gone(abbreviate(last)));
    }
  }

  // -- DELETE: the client ends its session --------------------------------------------------

  private void delete(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String id = sessionId(request, response, null, "");
    if (id == null) {
      return;
    }
    if (transport.end(id)) {
      response.setStatus(HttpServletResponse.SC_OK);
    } else {
      notFound(response, null);
    }
  }

  // -- answers ------------------------------------------------------------------------------

  /** The request's session, or null once the answer says why there is none. */
  private HttpMcpSession session(
      HttpServletRequest request, HttpServletResponse response, Object requestId)
      throws IOException {
    String id = sessionId(request, response, requestId, " (send initialize first)");
    if (id == null) {
      return null;
    }
    HttpMcpSession session = transport.session(id);
    if (session == null) {
      notFound(response, requestId);
    }
    return session;
  }

  /** The session id the request names, or null once a 400 says it names none ({@code more}). */
  private String sessionId(
      HttpServletRequest request, HttpServletResponse response, Object requestId, String more)
      throws IOException {
    String id = request.getHeader(SESSION_HEADER);
    if (id == null || id.isBlank()) {
      error(
          response,
          400,
          requestId,
          McpSchema.ErrorCodes.INVALID_REQUEST,
          "Bad Request: " + SESSION_HEADER + " header required" + more);
      return null;
    }
    return id;
  }

  private void notFound(HttpServletResponse response, Object requestId) throws IOException {
    error(response, 404, requestId, -32001, "Session not found (start a new one)");
  }

  private void answer(HttpServletResponse response, McpSchema.JSONRPCResponse answer)
      throws IOException {
    write(response, 200, json.writeValueAsBytes(McpErrorSerializer.ownWords(answer)));
  }

  private void error(HttpServletResponse response, int status, Object id, int code, String message)
      throws IOException {
    ObjectNode body = json.createObjectNode();
    body.put("jsonrpc", McpSchema.JSONRPC_VERSION);
    body.set("id", id == null ? json.nullNode() : json.valueToTree(id));
    body.putObject("error").put("code", code).put("message", message);
    write(response, status, json.writeValueAsBytes(body));
  }

  private static void write(HttpServletResponse response, int status, byte[] bytes)
      throws IOException {
    response.setStatus(status);
    response.setContentType("application/json");
    response.setCharacterEncoding("UTF-8");
    response.setContentLength(bytes.length);
    response.getOutputStream().write(bytes);
  }

  /** A cancel's request id as {@link InboundMessages#idOf} keeps ids: Integer when it fits. */
  private static Object normalise(Number n) {
    long v = n.longValue();
    return v == (int) v ? (Object) (int) v : (Object) v;
  }

  private static String abbreviate(String s) {
    return s.length() <= 80 ? s : s.substring(0, 77) + "...";
  }

  /** The request's transport context, with the call's handle for its handler. */
  private record CallContext(McpTransportContext base, CallHandle call)
      implements McpTransportContext {
    @Override
    public Object get(String key) {
      return CallHandle.CONTEXT_KEY.equals(key) ? call : base.get(key);
    }
  }
}

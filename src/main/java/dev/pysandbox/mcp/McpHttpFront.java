package dev.pysandbox.mcp;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.server.McpTransportContextExtractor;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;

/**
 * In front of the SDK's Streamable HTTP servlet: a POST carrying one of the {@link ResourceMethods}
 * in an MCP session is answered here (a JSON response), everything else goes to the SDK's servlet
 * unchanged, its body replayed. A {@code DELETE} that ends a session ends its subscriptions.
 *
 * <p>Only the first {@link #HEAD_BYTES} of a body are read before deciding, so a large upload is
 * not held twice: its top-level {@code "method"} is found in that head (the SDK's mapper refuses
 * duplicate keys, so the one found is the one the SDK would act on). Only a body whose {@code
 * "method"} comes after its first 64 KiB is read whole first, and scanned, not parsed. A resource
 * request is small: one over {@link #HEAD_BYTES} is refused ({@code -32600}).
 */
final class McpHttpFront extends HttpServlet {
  private static final long serialVersionUID = 1L;
  static final String SESSION_HEADER = "Mcp-Session-Id";
  static final int HEAD_BYTES = 64 * 1024;

  private final HttpServlet sdk;
  private final transient ObjectMapper json;
  private final transient McpTransportContextExtractor<HttpServletRequest> context;
  private transient volatile LoggingAsked logging;
  private final transient ResourceMethods methods;
  private final int maxMessageBytes;

  McpHttpFront(
      HttpServlet sdk,
      ObjectMapper json,
      McpTransportContextExtractor<HttpServletRequest> context,
      ResourceMethods methods,
      int maxMessageBytes) {
    this.sdk = sdk;
    this.json = json;
    this.context = context;
    this.methods = methods;
    this.maxMessageBytes = maxMessageBytes;
  }

  /** Tells {@code asked} when a client sets a logging level. */
  void recordLoggingIn(LoggingAsked asked) {
    this.logging = asked;
  }

  @Override
  public void init(ServletConfig config) throws ServletException {
    super.init(config);
    sdk.init(config);
  }

  @Override
  public void destroy() {
    sdk.destroy();
    super.destroy();
  }

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response)
      throws ServletException, IOException {
    String session = request.getHeader(SESSION_HEADER);
    if (session == null || !request.getMethod().equals("POST")) {
      sdk.service(request, response);
      if (session != null && request.getMethod().equals("DELETE") && response.getStatus() < 300) {
        methods.sessionClosed(session);
        if (logging != null) {
          logging.forget(session);
        }
      }
      return;
    }
    InputStream in = request.getInputStream();
    byte[] body = in.readNBytes(HEAD_BYTES + 1);
    if (body.length > HEAD_BYTES) {
      String method = methodIn(body);
      if (method == null) {
        body = readRest(body, in);
        method = body.length <= maxMessageBytes ? methodIn(body) : null;
      }
      if (ResourceMethods.handles(method)) {
        answer(response, tooLarge(body, method));
      } else {
        sdk.service(replaying(request, body, in), response);
      }
      return;
    }
    McpSchema.JSONRPCResponse refused = LogLevels.refusal(json, body);
    if (refused != null) {
      answer(response, refused); // the SDK would take any level
      return;
    }
    if (logging != null) {
      logging.saw(session, methodIn(body));
    }
    McpSchema.JSONRPCRequest call = resourceRequest(body);
    if (call == null) {
      sdk.service(replaying(request, body, in), response);
      return;
    }
    answer(response, methods.answer(context.extract(request), session, call));
  }

  private McpSchema.JSONRPCResponse tooLarge(byte[] body, String method) {
    return new McpSchema.JSONRPCResponse(
        McpSchema.JSONRPC_VERSION,
        new InboundMessages(json, Set::of).idFromHead(body, Math.min(body.length, HEAD_BYTES)),
        null,
        new McpSchema.JSONRPCResponse.JSONRPCError(
            McpSchema.ErrorCodes.INVALID_REQUEST,
            "Invalid Request: a " + method + " request of over " + HEAD_BYTES + " bytes",
            null));
  }

  /** The request, when the body is one of the resource methods with an id; else null. */
  private McpSchema.JSONRPCRequest resourceRequest(byte[] body) {
    try {
      JsonNode node = json.readTree(body);
      if (node != null
          && node.isObject()
          && "2.0".equals(node.path("jsonrpc").textValue())
          && ResourceMethods.handles(node.path("method").textValue())
          && InboundMessages.idOf(node.get("id")) != null
          && (node.get("params") == null
              || node.get("params").isNull()
              || node.get("params").isObject())) {
        return json.convertValue(node, McpSchema.JSONRPCRequest.class);
      }
    } catch (IOException | IllegalArgumentException e) {
      // not ours to answer: the SDK answers what it cannot read
    }
    return null;
  }

  /**
   * The top-level "method" of the JSON object {@code body} begins, or null when it is not there
   * (the body is cut short, or is not JSON: the SDK will say so). Values are skipped, not read.
   */
  private String methodIn(byte[] head) {
    try (JsonParser p = json.getFactory().createParser(head)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      JsonToken t;
      while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if ("method".equals(field)) {
          return value == JsonToken.VALUE_STRING ? p.getText() : null;
        }
        p.skipChildren();
      }
    } catch (IOException | RuntimeException e) {
      // cut short before the method, or not JSON
    }
    return null;
  }

  /** The rest of the body after the head, up to one byte over the limit. */
  private byte[] readRest(byte[] head, InputStream in) throws IOException {
    byte[] rest = in.readNBytes(Math.max(0, maxMessageBytes + 1 - head.length));
    byte[] all = Arrays.copyOf(head, head.length + rest.length);
    System.arraycopy(rest, 0, all, head.length, rest.length);
    return all;
  }

  private void answer(HttpServletResponse response, McpSchema.JSONRPCResponse answer)
      throws IOException {
    byte[] bytes = json.writeValueAsBytes(answer);
    response.setStatus(HttpServletResponse.SC_OK);
    response.setContentType("application/json");
    response.setCharacterEncoding("UTF-8");
    response.setContentLength(bytes.length);
    response.getOutputStream().write(bytes);
  }

  /** The request with its body given again: the bytes read, then what is left unread. */
  private static HttpServletRequest replaying(
      HttpServletRequest request, byte[] read, InputStream rest) {
    InputStream body = new SequenceInputStream(new ByteArrayInputStream(read), rest);
    ServletInputStream stream =
        new ServletInputStream() {
          private boolean finished;

          @Override
          public int read() throws IOException {
            int b = body.read();
            finished = b < 0;
            return b;
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            int n = body.read(b, off, len);
            finished = n < 0;
            return n;
          }

          @Override
          public boolean isFinished() {
            return finished;
          }

          @Override
          public boolean isReady() {
            return true;
          }

          @Override
          public void setReadListener(ReadListener listener) {
            throw new IllegalStateException("the MCP servlet reads its body blocking");
          }
        };
    return new HttpServletRequestWrapper(request) {
      @Override
      public ServletInputStream getInputStream() {
        return stream;
      }

      @Override
      public BufferedReader getReader() {
        return new BufferedReader(
            new InputStreamReader(
                stream,
                request.getCharacterEncoding() == null
                    ? StandardCharsets.UTF_8
                    : java.nio.charset.Charset.forName(request.getCharacterEncoding())));
      }
    };
  }
}

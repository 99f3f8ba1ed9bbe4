package dev.pysandbox.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A raw HTTP/1.1 client of {@code /mcp} on a socket of its own: it sends exactly the headers a test
 * names, reads an SSE answer event by event as it arrives, and can drop the connection in the
 * middle of a stream (what a client on a flaky network does), which a client library would not.
 */
final class RawMcpHttp implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();

  /** One SSE event: its id (null when none), retry (null when none) and data. */
  record Event(String id, String retry, String data) {
    JsonNode json() throws IOException {
      return JSON.readTree(data);
    }
  }

  private final Socket socket;
  private final InputStream in;
  int status;
  final Map<String, String> headers = new LinkedHashMap<>();
  private boolean chunked;
  private long chunkLeft;
  private boolean ended;

  private RawMcpHttp(Socket socket) throws IOException {
    this.socket = socket;
    this.in = socket.getInputStream();
  }

  /** Sends a request and reads its status line and headers. */
  static RawMcpHttp send(URI base, String method, String body, String... headers)
      throws IOException {
    Socket s = new Socket(base.getHost(), base.getPort());
    s.setSoTimeout(60_000);
    byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    StringBuilder req =
        new StringBuilder()
            .append(method)
            .append(" /mcp HTTP/1.1\r\nHost: ")
            .append(base.getHost())
            .append(':')
            .append(base.getPort())
            .append("\r\n");
    for (int i = 0; i < headers.length; i += 2) {
      req.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
    }
    if (body != null) {
      req.append("Content-Type: application/json\r\nContent-Length: ")
          .append(bytes.length)
          .append("\r\n");
    }
    req.append("\r\n");
    OutputStream out = s.getOutputStream();
    out.write(req.toString().getBytes(StandardCharsets.ISO_8859_1));
    out.write(bytes);
    out.flush();
    RawMcpHttp r = new RawMcpHttp(s);
    r.readHead();
    return r;
  }

  /** A POST of a JSON-RPC message in {@code session} (null for initialize). */
  static RawMcpHttp post(URI base, String session, String body, String... more) throws IOException {
    List<String> h = new ArrayList<>(List.of("Accept", "application/json, text/event-stream"));
    if (session != null) {
      h.addAll(List.of("Mcp-Session-Id", session));
    }
    h.addAll(List.of(more));
    return send(base, "POST", body, h.toArray(String[]::new));
  }

  /** Opens an MCP session of {@code version} (initialize, then initialized); returns its id. */
  static String session(URI base, String version) throws IOException {
    String session;
    try (RawMcpHttp init =
        post(
            base,
            null,
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\""
                + version
                + "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}")) {
      if (init.status != 200) {
        throw new IOException("initialize: " + init.status + " " + init.body());
      }
      session = init.headers.get("mcp-session-id");
    }
    try (RawMcpHttp done =
        post(base, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")) {
      done.body();
    }
    return session;
  }

  static String call(Object id, String tool, String argumentsJson) {
    return "{\"jsonrpc\":\"2.0\",\"id\":"
        + JSON.valueToTree(id)
        + ",\"method\":\"tools/call\",\"params\":{\"name\":\""
        + tool
        + "\",\"arguments\":"
        + argumentsJson
        + "}}";
  }

  private void readHead() throws IOException {
    String statusLine = line();
    status = Integer.parseInt(statusLine.split(" ")[1]);
    String l;
    while (!(l = line()).isEmpty()) {
      int colon = l.indexOf(':');
      headers.put(
          l.substring(0, colon).strip().toLowerCase(Locale.ROOT), l.substring(colon + 1).strip());
    }
    chunked = "chunked".equalsIgnoreCase(headers.get("transfer-encoding"));
    if (!chunked) {
      chunkLeft = Long.parseLong(headers.getOrDefault("content-length", "0"));
    }
  }

  /** The rest of the body, as text. */
  String body() throws IOException {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    int b;
    while ((b = bodyByte()) >= 0) {
      all.write(b);
    }
    return all.toString(StandardCharsets.UTF_8);
  }

  /** The next SSE event, or null at the end of the stream. */
  Event next() throws IOException {
    String id = null;
    String retry = null;
    StringBuilder data = null;
    boolean any = false;
    String l;
    while ((l = bodyLine()) != null) {
      if (l.isEmpty()) {
        if (any) {
          return new Event(id, retry, data == null ? "" : data.toString());
        }
        continue;
      }
      any = true;
      if (l.startsWith("id:")) {
        id = l.substring(3).strip();
      } else if (l.startsWith("retry:")) {
        retry = l.substring(6).strip();
      } else if (l.startsWith("data:")) {
        String d = l.substring(5);
        d = d.startsWith(" ") ? d.substring(1) : d;
        data = data == null ? new StringBuilder(d) : data.append('\n').append(d);
      }
    }
    return any ? new Event(id, retry, data == null ? "" : data.toString()) : null;
  }

  /** The events until the end of the stream. */
  List<Event> rest() throws IOException {
    List<Event> all = new ArrayList<>();
    Event e;
    while ((e = next()) != null) {
      all.add(e);
    }
    return all;
  }

  private String bodyLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = bodyByte()) >= 0 && b != '\n') {
      line.write(b);
    }
    if (b < 0 && line.size() == 0) {
      return null;
    }
    return line.toString(StandardCharsets.UTF_8);
  }

  private int bodyByte() throws IOException {
    if (ended) {
      return -1;
    }
    if (chunkLeft == 0) {
      if (!chunked) {
        ended = true;
        return -1;
      }
      String size = line();
      if (size.isEmpty()) {
        size = line();
      }
      chunkLeft = Long.parseLong(size.split(";")[0].strip(), 16);
      if (chunkLeft == 0) {
        ended = true;
        return -1;
      }
    }
    int b = in.read();
    if (b < 0) {
      ended = true;
      return -1;
    }
    chunkLeft--;
    return b;
  }

  private String line() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0 && b != '\n') {
      if (b != '\r') {
        line.write(b);
      }
    }
    return line.toString(StandardCharsets.ISO_8859_1);
  }

  /** Drops the connection at once, as a client whose network went away. */
  @Override
  public void close() throws IOException {
    socket.close();
  }
}

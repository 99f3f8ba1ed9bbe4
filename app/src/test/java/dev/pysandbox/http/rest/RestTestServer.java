package dev.pysandbox.http.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Await;
import dev.pysandbox.api.Tenants;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The REST servlet in a real Jetty on an ephemeral loopback port, with a test-only filter standing
 * in for the server's authentication (the tenant from {@code X-Test-Tenant}) and measuring what
 * each request marked {@code X-Test-Measure} allocated on the thread that served it. Jetty's URI
 * checks are relaxed (ambiguous segments and encoded separators let through), so that traversal
 * attempts reach the servlet and the servlet's own defence is what is tested.
 */
final class RestTestServer implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();

  final Server server;
  final int port;
  final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  /** Bytes allocated on the serving thread, by the request's X-Test-Measure. */
  final Map<String, Long> allocated = new ConcurrentHashMap<>();

  private RestTestServer(Server server, int port) {
    this.server = server;
    this.port = port;
  }

  static RestTestServer start(RestServlet servlet) throws Exception {
    return start(servlet, 30_000);
  }

  /** With the connector's idle timeout, in ms. */
  static RestTestServer start(RestServlet servlet, long idleTimeoutMillis) throws Exception {
    Server server = new Server();
    HttpConfiguration http = new HttpConfiguration();
    http.setUriCompliance(UriCompliance.UNSAFE);
    ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    connector.setIdleTimeout(idleTimeoutMillis);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.getServletHandler().setDecodeAmbiguousURIs(true);
    RestTestServer[] self = new RestTestServer[1];
    FilterHolder auth = new FilterHolder(new TestAuthFilter(m -> self[0].allocated.putAll(m)));
    auth.setAsyncSupported(true);
    context.addFilter(auth, "/*", EnumSet.of(jakarta.servlet.DispatcherType.REQUEST));
    ServletHolder rest = new ServletHolder(servlet);
    rest.setAsyncSupported(true);
    context.addServlet(rest, RestServlet.MAPPING);
    server.setHandler(context);
    server.start();
    self[0] = new RestTestServer(server, connector.getLocalPort());
    return self[0];
  }

  /**
   * What the request marked {@code measure} allocated on its thread; waits for it, since the filter
   * records it after the answer has gone out.
   */
  long allocatedBy(String measure) throws InterruptedException {
    return Await.until(
        "an allocation recorded for " + measure, () -> allocated.get(measure), b -> b != null);
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + "/api/v1" + path);
  }

  HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(uri(path))
        .timeout(Duration.ofSeconds(60))
        .header("X-Test-Tenant", Tenants.LOCAL);
  }

  HttpResponse<String> send(HttpRequest.Builder b) throws IOException, InterruptedException {
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return send(request(path).GET());
  }

  HttpResponse<String> json(String method, String path, String body)
      throws IOException, InterruptedException {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body)));
  }

  static JsonNode tree(HttpResponse<String> r) throws IOException {
    return JSON.readTree(r.body());
  }

  /** A raw HTTP/1.1 exchange, for what HttpClient would not send as written. */
  RawResponse raw(String head, byte[] body) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(30_000);
      OutputStream out = s.getOutputStream();
      out.write(head.getBytes(StandardCharsets.ISO_8859_1));
      if (body != null) {
        out.write(body);
      }
      out.flush();
      return RawResponse.read(s.getInputStream());
    }
  }

  /** A GET of a path exactly as written (no client normalises it). */
  RawResponse rawGet(String pathAsSent) throws IOException {
    return raw(
        "GET /api/v1"
            + pathAsSent
            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test-Tenant: local\r\nConnection: close\r\n\r\n",
        null);
  }

  @Override
  public void close() {
    try {
      server.stop();
    } catch (Exception e) {
      throw new IllegalStateException("Jetty did not stop", e);
    }
  }

  /** A response read off a socket: the status, the headers (names in lower case) and the body. */
  record RawResponse(int status, Map<String, String> headers, String body) {
    static RawResponse read(InputStream in) throws IOException {
      String statusLine = line(in);
      int status = Integer.parseInt(statusLine.split(" ")[1]);
      Map<String, String> headers = new LinkedHashMap<>();
      for (String h = line(in); !h.isEmpty(); h = line(in)) {
        int colon = h.indexOf(':');
        headers.put(
            h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
      }
      int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
      byte[] body = in.readNBytes(length);
      return new RawResponse(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    private static String line(InputStream in) throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      for (int c = in.read(); c != '\n'; c = in.read()) {
        if (c < 0) {
          throw new IOException("the connection closed mid-response: " + b);
        }
        if (c != '\r') {
          b.write(c);
        }
      }
      return b.toString(StandardCharsets.ISO_8859_1);
    }

    JsonNode json() throws IOException {
      return JSON.readTree(body);
    }
  }

  /** Stands in for the server's authentication; measures allocation when asked to. */
  static final class TestAuthFilter implements Filter {
    private static final AtomicLong IDS = new AtomicLong();
    private final java.util.function.Consumer<Map<String, Long>> measured;

    TestAuthFilter(java.util.function.Consumer<Map<String, Long>> measured) {
      this.measured = measured;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse resp, FilterChain chain)
        throws IOException, ServletException {
      HttpServletRequest r = (HttpServletRequest) req;
      String tenant = r.getHeader("X-Test-Tenant");
      if (tenant != null) {
        r.setAttribute(RestServlet.TENANT_ATTRIBUTE, tenant);
        String role = r.getHeader("X-Test-Role");
        r.setAttribute(
            dev.pysandbox.http.HttpFace.CALLER_ATTRIBUTE,
            new dev.pysandbox.http.Caller(
                "key_test" + (role == null ? "agent" : role),
                tenant,
                role == null ? "agent" : role));
      }
      r.setAttribute(RestServlet.REQUEST_ID_ATTRIBUTE, "req-" + IDS.incrementAndGet());
      String measure = r.getHeader("X-Test-Measure");
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      long before = threads.getCurrentThreadAllocatedBytes();
      try {
        chain.doFilter(req, resp);
      } finally {
        if (measure != null) {
          measured.accept(Map.of(measure, threads.getCurrentThreadAllocatedBytes() - before));
        }
      }
    }
  }
}

package dev.pysandbox.http;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.MetricsRecorder;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.mcp.McpFace;
import dev.pysandbox.mcp.McpHttpEndpoint;
import dev.pysandbox.util.TimeSource;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP face: one Jetty server with MCP over Streamable HTTP at {@code /mcp}, the health checks
 * {@code /health} and {@code /ready}, {@code /metrics}, and whatever else is {@linkplain #mount
 * mounted} (the REST API at {@code /api/v1/*}). Every request passes, in order: the request filter
 * (id, logging context, metrics, refusal while stopping), the slow-peer guard (a minimum data rate
 * for bodies and answers), the Host/Origin guard, authentication, rate limiting and the caller's
 * caps on requests in flight, and the body limit of its route. Every error, ours or Jetty's, is
 * JSON in the one error shape.
 *
 * <p>A mounted servlet finds the caller on its request: {@link #CALLER_ATTRIBUTE} (a {@link
 * Caller}), {@link #TENANT_ATTRIBUTE} (its tenant) and {@link #REQUEST_ID_ATTRIBUTE}; the SLF4J MDC
 * holds {@code request_id} and {@code tenant} while it runs.
 */
public final class HttpFace {
  private static final Logger log = LoggerFactory.getLogger(HttpFace.class);

  /** Request attribute: the {@link Caller} that made the request. */
  public static final String CALLER_ATTRIBUTE = "pysandbox.caller";

  /** Request attribute: the caller's tenant, a String (the tenant whose data it acts on). */
  public static final String TENANT_ATTRIBUTE = "pysandbox.tenant";

  /**
   * Request attribute a mounted servlet may set: the template of the route that answered (a String
   * such as {@code /api/v1/runs/{run_id}}), the route in the request's metrics instead of the
   * servlet's mapping.
   */
  public static final String ROUTE_ATTRIBUTE = "pysandbox.route";

  /** Request attribute: the request's id, a String, also sent back as {@code X-Request-Id}. */
  public static final String REQUEST_ID_ATTRIBUTE = "pysandbox.request_id";

  /** Requests answered at once (a run holds its request's thread while it runs). */
  static final int MAX_THREADS = 320;

  /**
   * Threads no caller's requests may take, whatever the caps per key: for the health checks, the
   * refusals (401, 429) and Jetty's own selector and acceptor.
   */
  static final int RESERVED_THREADS = 64;

  static final int MAX_REQUEST_HEADER_BYTES = 16 * 1024;

  /**
   * A connection that waits this long for the client (reading a request, writing an answer the
   * client does not take, idle between requests) is closed. A request the server itself is still
   * working on (a long run, an open MCP stream) is not waiting on the connection, and is not cut.
   */
  static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);

  /** How long answers to runs interrupted at the end of the grace period may take to go out. */
  private static final long INTERRUPTED_ANSWER_MILLIS = 2000;

  private final PysandboxConfig config;
  private final KeyCheck keys;
  private final SandboxService service;
  private final McpFace mcp;
  private final TimeSource time;
  private final Map<String, Mount> mounts = new LinkedHashMap<>();
  private final Set<String> withoutKey = new LinkedHashSet<>();
  private final InFlight inFlight = new InFlight();
  private Duration idleTimeout = IDLE_TIMEOUT;
  private Duration slowGrace = SlowPeerGuard.GRACE;
  private Server server;
  private ServerConnector connector;
  private RequestFilter requestFilter;
  private McpHttpEndpoint mcpEndpoint;
  private CallerSlots slots;
  private boolean stopping;

  /**
   * @param boundsItself the servlet bounds every body it reads, by route, so the body limit filter
   *     only refuses a declared length over {@code maxBodyBytes} and leaves a chunked body to it
   */
  private record Mount(HttpServlet servlet, long maxBodyBytes, boolean boundsItself) {}

  /** Mappings of the face's own servlets, which {@link #mount} may not take. */
  private static final Set<String> RESERVED = Set.of("/health", "/ready", "/metrics", "/");

  /**
   * @param mcp the MCP face, made by {@link McpFace#forTenants} so that each call acts on its
   *     caller's tenant
   * @param service what {@code /ready} and the sessions gauge ask
   */
  public HttpFace(PysandboxConfig config, KeyCheck keys, SandboxService service, McpFace mcp) {
    this(config, keys, service, mcp, TimeSource.system());
  }

  HttpFace(
      PysandboxConfig config, KeyCheck keys, SandboxService service, McpFace mcp, TimeSource time) {
    this.config = config;
    this.keys = keys;
    this.service = service;
    this.mcp = mcp;
    this.time = time;
  }

  /**
   * Refuses to serve when no caller could get in: {@code http_auth=keys} with no key in the store.
   * ({@code http_auth=none} off loopback is refused by the configuration itself.)
   *
   * @throws PysandboxException {@code invalid_argument}, which says what to do
   */
  public static void checkCanServe(PysandboxConfig config, KeyCheck keys) {
    if (config.httpAuthKeys() && !keys.anyKeys()) {
      throw PysandboxException.invalid(
          "http_auth=keys and there is no API key, so every request would be refused: create a"
              + " key first, or on a loopback http_host set http_auth=none");
    }
  }

  /**
   * Mounts another servlet behind the same filters (authenticated, rate-limited, measured), whose
   * request bodies are cut off at {@code maxBodyBytes}, with or without a declared length. Call
   * before {@link #start}.
   *
   * @param pathSpec a servlet mapping ({@code /api/v1/*}); it is also the route in metrics
   * @param maxBodyBytes a longer request body is refused with 413
   */
  public HttpFace mount(String pathSpec, HttpServlet servlet, long maxBodyBytes) {
    return mount(pathSpec, new Mount(servlet, maxBodyBytes, false));
  }

  /**
   * Mounts a servlet that bounds each request body itself, route by route (the REST API: a JSON
   * body may be {@code code_max_bytes} + 1 MiB, an upload {@code upload_max_bytes}): a declared
   * length over {@code maxBodyBytes}, its largest, is still refused here with 413 before a byte is
   * read, but a body without a length is the servlet's to cut off, so that it answers 413 itself (a
   * cut made here would reach it as a broken stream).
   */
  public HttpFace mountBoundingBodies(String pathSpec, HttpServlet servlet, long maxBodyBytes) {
    return mount(pathSpec, new Mount(servlet, maxBodyBytes, true));
  }

  private HttpFace mount(String pathSpec, Mount mount) {
    if (server != null) {
      throw new IllegalStateException("mount before start");
    }
    if (pathSpec.equals(McpHttpEndpoint.PATH) || RESERVED.contains(pathSpec)) {
      throw new IllegalArgumentException(pathSpec + " is the HTTP face's own");
    }
    mounts.put(pathSpec, mount);
    return this;
  }

  /**
   * Lets {@code GET} and {@code HEAD} of exactly {@code path} in without a key, as the health
   * checks are (no tenant, no rate limit; the Host/Origin guard still applies): for a mounted
   * servlet's document that shows nothing of any tenant, such as {@code /api/v1/openapi.json}. Call
   * before {@link #start}.
   */
  public HttpFace withoutKey(String path) {
    if (server != null) {
      throw new IllegalStateException("withoutKey before start");
    }
    withoutKey.add(path);
    return this;
  }

  /** For tests: another grace than {@link SlowPeerGuard#GRACE} before a slow peer is measured. */
  HttpFace slowGrace(Duration grace) {
    this.slowGrace = grace;
    return this;
  }

  /** The caps on each caller's requests in flight (for tests); null before start. */
  CallerSlots slots() {
    return slots;
  }

  /** For tests: another idle timeout than {@link #IDLE_TIMEOUT}. */
  HttpFace idleTimeout(Duration timeout) {
    this.idleTimeout = timeout;
    return this;
  }

  /**
   * Starts listening on {@code http_host:http_port}.
   *
   * @throws PysandboxException {@code invalid_argument} when the address cannot be bound (in use,
   *     not this machine's)
   */
  public synchronized void start() {
    if (server != null) {
      throw new IllegalStateException("already started");
    }
    QueuedThreadPool threads = new QueuedThreadPool(MAX_THREADS, 4);
    threads.setName("pysandbox-http");
    server = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setRequestHeaderSize(MAX_REQUEST_HEADER_BYTES);
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    // A file path below /api/v1 may spell its slashes %2F (what an OpenAPI client sends for a path
    // parameter); the REST servlet routes on the raw path and decodes each variable once, and
    // every other check here looks at the raw path too. Nothing else ambiguous is let through.
    http.setUriCompliance(
        UriCompliance.DEFAULT.with("pysandbox", UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR));
    connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
    connector.setHost(config.httpHost());
    connector.setPort(config.httpPort());
    connector.setIdleTimeout(idleTimeout.toMillis());
    server.addConnector(connector);
    server.setErrorHandler(new JsonErrorHandler());
    server.setStopTimeout(1000);

    ServletContextHandler context = new ServletContextHandler("/");
    context.getServletHandler().setDecodeAmbiguousURIs(true);
    context.setErrorHandler(new JsonErrorHandler.ForServlets());
    ServiceGauges gauges = new ServiceGauges(service);
    HttpMetrics metrics = new HttpMetrics(inFlight, gauges::load, gauges::securityEvents);
    if (service != null) {
      service.recordMetrics(metrics);
    }
    requestFilter = new RequestFilter(inFlight, metrics);
    int maxMessage = McpFace.maxMessageBytes(config.uploadMaxBytes());
    Map<String, Long> limits = new HashMap<>();
    Map<String, Boolean> boundsItself = new HashMap<>();
    limits.put(McpHttpEndpoint.PATH, (long) maxMessage);
    boundsItself.put(McpHttpEndpoint.PATH, true);
    mounts.forEach(
        (path, m) -> {
          limits.put(path, m.maxBodyBytes());
          boundsItself.put(path, m.boundsItself());
        });
    slots = CallerSlots.of(config, MAX_THREADS - RESERVED_THREADS);
    filter(context, requestFilter, "/*");
    filter(context, new SlowPeerGuard(config.httpMinDataRate(), slowGrace), "/*");
    filter(
        context,
        new OriginFilter(
            config.allowedHosts(), config.allowedOrigins(), config.httpHost(), this::port),
        "/*");
    filter(
        context,
        new AuthFilter(
            keys,
            config.httpAuthKeys(),
            new RateLimiter(config.rateLimitPerSecond(), config.rateLimitBurst(), time),
            withoutKey,
            slots),
        "/*");
    filter(context, new BodyLimitFilter(limits, boundsItself), "/*");
    filter(context, new McpSessionFilter(), McpHttpEndpoint.PATH);

    mcpEndpoint = mcp.serveHttp(McpCallerContext::of, maxMessage);
    ServletHolder mcpHolder = new ServletHolder("mcp", mcpEndpoint.servlet());
    mcpHolder.setAsyncSupported(true);
    context.addServlet(mcpHolder, McpHttpEndpoint.PATH);
    HealthServlet health = new HealthServlet(this::ready, time);
    context.addServlet(new ServletHolder("health", health), "/health");
    context.addServlet(new ServletHolder("ready", health), "/ready");
    context.addServlet(new ServletHolder("metrics", new MetricsServlet(metrics)), "/metrics");
    mounts.forEach(
        (path, m) -> {
          ServletHolder holder = new ServletHolder(m.servlet());
          holder.setAsyncSupported(true);
          context.addServlet(holder, path);
        });
    context.addServlet(new ServletHolder("not-found", new NotFoundServlet()), "/");

    if (config.allowedOrigins().isEmpty()) {
      server.setHandler(context);
    } else {
      server.setHandler(CorsPolicy.handler(config.allowedOrigins(), context));
    }
    try {
      server.start();
    } catch (Exception e) {
      stopQuietly();
      throw new PysandboxException(
          ErrorCode.INVALID_ARGUMENT,
          "cannot listen on " + config.httpHost() + ":" + config.httpPort() + ": " + e.getMessage(),
          e);
    }
    if (!config.httpAuthKeys()) {
      log.warn(
          "http_auth=none: every HTTP caller on {} is the tenant local, without a key",
          config.httpHost());
    }
  }

  private static void filter(ServletContextHandler context, Filter filter, String path) {
    context.addFilter(new FilterHolder(filter), path, EnumSet.of(DispatcherType.REQUEST));
  }

  private boolean ready() {
    return service.checkSetup().ready();
  }

  /** The port listened on (the one picked when {@code http_port} is 0); -1 before start. */
  public int port() {
    return connector == null ? -1 : connector.getLocalPort();
  }

  /** Where the server is, e.g. {@code http://127.0.0.1:8765}; MCP is at {@code /mcp} under it. */
  public URI uri() {
    String host = config.httpHost();
    if (host.contains(":") && !host.startsWith("[")) {
      host = "[" + host + "]";
    }
    return URI.create("http://" + host + ":" + port());
  }

  /**
   * Stops gracefully: no new connection or request is taken (a request on an open connection gets
   * 503), requests in flight have {@code shutdown_grace} to finish, then {@code endTheRest} runs
   * (it should end the runs still going, so that their requests answer), their answers get two
   * seconds more, the MCP sessions end and Jetty stops. Idempotent.
   */
  public void stop(Runnable endTheRest) {
    stop(config.shutdownGraceSeconds() * 1000L, endTheRest);
  }

  /**
   * As {@link #stop(Runnable)} with another grace: 0 when the process must end now (the stdio
   * client that owns it has gone, and kills it within seconds), so that the runs in flight are
   * ended and recorded while it can.
   */
  public void stop(long graceMillis, Runnable endTheRest) {
    synchronized (this) {
      if (server == null || stopping) {
        return;
      }
      stopping = true;
    }
    requestFilter.stopTakingRequests();
    for (Connector c : server.getConnectors()) {
      c.shutdown();
    }
    try {
      if (!inFlight.awaitIdle(graceMillis) && graceMillis > 0) {
        log.info(
            "{} HTTP requests still in flight after shutdown_grace ({} s); ending their runs",
            inFlight.count(),
            graceMillis / 1000);
      }
      endTheRest.run();
      inFlight.awaitIdle(INTERRUPTED_ANSWER_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    mcpEndpoint.close();
    if (service != null) {
      service.recordMetrics(MetricsRecorder.NONE);
    }
    stopQuietly();
  }

  private void stopQuietly() {
    try {
      server.stop();
    } catch (Exception e) {
      log.warn("stopping the HTTP server: {}", e.toString());
    }
  }
}

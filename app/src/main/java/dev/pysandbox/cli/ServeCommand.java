package dev.pysandbox.cli;

import dev.pysandbox.app.ApiKeysFactory;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.config.Setting;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.core.host.ProtocolStdout;
import dev.pysandbox.http.Caller;
import dev.pysandbox.http.HttpFace;
import dev.pysandbox.http.KeyCheck;
import dev.pysandbox.http.rest.RestServlet;
import dev.pysandbox.mcp.McpFace;
import dev.pysandbox.mcp.StdioConnection;
import dev.pysandbox.store.ApiKeys;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox serve}: MCP over stdio until the client closes stdin, or with {@code --http} MCP
 * over Streamable HTTP (and the rest of the HTTP face) until the process is told to stop; {@code
 * --http --stdio} serves both from one core. The real stdout goes to the stdio transport alone, on
 * a descriptor of its own ({@link ProtocolStdout}: descriptor 1 and {@code System.out} are pointed
 * at stderr), so neither a stray print nor the JVM's own fatal error report can corrupt the
 * protocol.
 *
 * <p>Stopping: at the end of stdin, runs in flight on every face (HTTP too, with {@code --stdio})
 * end {@code interrupted} and are recorded at once, their answers are written if the client still
 * reads, every sandbox is killed, and the process exits within about a second. On a signal
 * (SIGTERM, SIGINT) the HTTP face first stops taking requests and gives those in flight {@code
 * shutdown_grace} to finish; then the same happens, and the process exits 0.
 */
@Command(
    name = "serve",
    description = {
      "Serve MCP over stdio (for Claude Code and other clients), or over HTTP with --http.",
    })
final class ServeCommand implements Callable<Integer> {
  /** How long answers to calls that were in flight may take to be written at the end. */
  private static final long ANSWER_WAIT_MILLIS = 500;

  /** How long runs that were interrupted may take to record their end. */
  private static final long RECORD_WAIT_MILLIS = 600;

  private static boolean stopped;

  @ParentCommand Main main;

  @Option(
      names = "--http",
      description =
          "Serve over HTTP: MCP at /mcp, /health, /ready, /metrics (setting http_host, http_port).")
  boolean http;

  @Option(names = "--stdio", description = "With --http: serve MCP over stdio as well.")
  boolean stdio;

  @Option(
      names = "--port",
      paramLabel = "N",
      description = "HTTP port (setting http_port; 0 picks a free one).")
  Integer port;

  @Option(names = "--host", paramLabel = "H", description = "HTTP address (setting http_host).")
  String host;

  @Override
  public Integer call() {
    boolean serveStdio = stdio || !http;
    System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true));
    if (port != null) {
      main.settings.put(Setting.HTTP_PORT.key(), port.toString());
    }
    if (host != null) {
      main.settings.put(Setting.HTTP_HOST.key(), host);
    }
    PysandboxConfig config = main.config(Map.of());
    OutputStream protocolOut =
        serveStdio
            ? ProtocolStdout.take(new DataLayout(config.dataDir()).nativeDir())
            : new FileOutputStream(FileDescriptor.out);
    KeyCheck keys = keyCheck(config, http);
    if (http) {
      HttpFace.checkCanServe(config, keys);
    }
    DefaultSandboxService service = Assembly.start(config);
    if (http && config.httpAuthKeys() && !config.maxSessionsPerTenantSet()) {
      service.shareSessionsAmong(new KeyedTenants(ApiKeysFactory.open(config, true), serveStdio));
    }
    HttpFace httpFace = null;
    if (http) {
      httpFace =
          new HttpFace(
              config,
              keys,
              service,
              McpFace.forTenants(service, config.resultOutputLimitBytes())
                  .agentApprovals(config.agentMayApprove())
                  .httpElicitationApproves(config.httpElicitationApproves())
                  .toolsEnabled(config.toolsEnabled()));
      RestServlet rest = RestServlet.of(service, config);
      httpFace
          .mountBoundingBodies(RestServlet.MAPPING, rest, rest.maxBodyBytes())
          .withoutKey(RestServlet.DOCUMENT_PATH);
      try {
        httpFace.start();
      } catch (RuntimeException e) {
        service.close("the HTTP face could not start");
        throw e;
      }
      System.err.println("pysandbox: listening on " + httpFace.uri());
    }
    StdioConnection connection = null;
    if (serveStdio) {
      connection =
          new McpFace(service, config.resultOutputLimitBytes())
              .agentApprovals(config.agentMayApprove())
              .toolsEnabled(config.toolsEnabled())
              .serveStdio(
                  new FileInputStream(FileDescriptor.in),
                  protocolOut,
                  McpFace.maxMessageBytes(config.uploadMaxBytes()));
    }
    HttpFace face = httpFace;
    StdioConnection stdioConnection = connection;
    Thread hook =
        new Thread(
            () -> {
              if (stop(
                  service,
                  face,
                  config.shutdownGraceSeconds(),
                  stdioConnection,
                  "the server was told to stop (a signal)")) {
                // A stop asked for and carried out is a clean exit, not death by a signal.
                Runtime.getRuntime().halt(0);
              }
            },
            "pysandbox-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    if (connection == null) {
      awaitForever();
      return 0;
    }
    connection.closed().join();
    // The stdio client that owns this process has gone, and kills it within seconds (the MCP
    // SDKs: SIGTERM 2 s after the end of stdin, SIGKILL 2 s later): no grace for HTTP requests.
    // Every run in flight, on either face, ends interrupted and is recorded now, while it can be.
    stop(service, face, 0, connection, "the MCP client closed the connection (end of stdin)");
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // already shutting down
    }
    return 0;
  }

  /**
   * The API keys HTTP callers are checked against: the key store in the data directory (shared with
   * {@code pysandbox keys} and other servers, so a revocation reaches this one within 2 s). Not
   * opened for stdio alone, or when {@code http_auth=none}.
   */
  static KeyCheck keyCheck(PysandboxConfig config, boolean http) {
    if (!http || !config.httpAuthKeys()) {
      return KeyCheck.EMPTY;
    }
    ApiKeys keys = ApiKeysFactory.open(config, true);
    return new KeyCheck() {
      @Override
      public Optional<Caller> check(String presentedKey) {
        return keys.authenticate(presentedKey)
            .map(p -> new Caller(p.keyId(), p.tenant(), p.role()));
      }

      @Override
      public boolean anyKeys() {
        return keys.list().stream().anyMatch(k -> k.revokedAt() == null);
      }
    };
  }

  private static void awaitForever() {
    try {
      new CountDownLatch(1).await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Once: a signal during the stop at end of stdin (or the reverse) waits for the stop under way
   * instead of running a second one beside it.
   *
   * @param graceSeconds how long HTTP requests in flight may take to finish; 0 to interrupt their
   *     runs at once
   * @return true when this call did the stop
   */
  private static synchronized boolean stop(
      DefaultSandboxService service,
      HttpFace http,
      int graceSeconds,
      StdioConnection connection,
      String why) {
    if (stopped) {
      return false;
    }
    stopped = true;
    if (http != null && graceSeconds > 0) {
      // Runs still going after the grace are cancelled, each recorded with why.
      String cancelled =
          why + ", and the run did not finish within shutdown_grace (" + graceSeconds + " s)";
      http.stop(() -> service.drain(0, cancelled));
    } else if (http != null) {
      http.stop(0, () -> service.interruptRuns(why, RECORD_WAIT_MILLIS));
    }
    service.interruptRuns(why, RECORD_WAIT_MILLIS);
    if (connection != null) {
      connection.close(ANSWER_WAIT_MILLIS);
    }
    service.close(why);
    return true;
  }
}

package dev.pysandbox.bench;

import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.core.DefaultSandboxService;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HTTP face's figures (part of {@link Benchmark}, {@code BENCH_ONLY=http}), each next to its
 * baseline from the same run:
 *
 * <ul>
 *   <li>one call at a time on keep-alive: {@code GET /health} (the HTTP floor), MCP {@code ping},
 *       {@code tools/list} and {@code run_python print(1)} in a session and one-shot, from a lean
 *       raw client ({@link RawMcpClient}; with the mean the server itself measured, from its {@code
 *       /metrics}) and from the MCP SDK's Streamable HTTP client; the REST API's {@code POST
 *       /api/v1/runs} one-shot and in a session; the same MCP calls over stdio (raw and SDK
 *       client), and the session's {@code print(1)} in-process, with no transport (in this JVM: C2
 *       and G1, where the launcher's server has C1 only and the serial GC);
 *   <li>throughput: clients with a session each running {@code pass} as fast as they can, over MCP
 *       HTTP, REST, stdio and in-process, with where the CPU went ({@link Throughput}, {@link
 *       CpuSample});
 *   <li>what idle MCP sessions cost the server's heap and threads ({@link IdleMcpSessions});
 *   <li>the bare {@code python3 -c pass} spawn.
 * </ul>
 *
 * <p>The servers run with {@code http_auth=none}, no rate limit and room for the load's sessions.
 * Knobs (system properties): {@code bench.httpClients} (16), {@code bench.httpSeconds} (10), {@code
 * bench.httpLoadCalls} (0: no limit but the time), {@code bench.httpIdleSessions} (1000).
 */
final class HttpBench {
  private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

  private final Path launcher;
  private final Path dataDir;
  private final int warmCalls;
  private final int oneShotCalls;
  private final int clients = Integer.getInteger("bench.httpClients", 16);
  private final Duration loadTime = Duration.ofSeconds(Integer.getInteger("bench.httpSeconds", 10));
  private final long loadCalls = Long.getLong("bench.httpLoadCalls", 0);
  private final int idleSessions = Integer.getInteger("bench.httpIdleSessions", 1000);

  private HttpBench(Path launcher, Path dataDir, int warmCalls, int oneShotCalls) {
    this.launcher = launcher;
    this.dataDir = dataDir;
    this.warmCalls = warmCalls;
    this.oneShotCalls = oneShotCalls;
  }

  /** The load's sessions, and room for the one-call-at-a-time ones. */
  private int maxSessions() {
    return clients + 8;
  }

  static void run(Path launcher, Path dataDir, int warmCalls, int oneShotCalls) throws Exception {
    new HttpBench(launcher, dataDir, warmCalls, oneShotCalls).all();
  }

  private void all() throws Exception {
    // The in-process service and the SDK clients log at INFO on stderr, among the figures.
    ((ch.qos.logback.classic.Logger)
            org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME))
        .setLevel(ch.qos.logback.classic.Level.WARN);
    System.out.printf(
        "load average at the start: %s; loads: %d clients, a session each, %s%n%n",
        LiveBench.loadAverage(),
        clients,
        loadCalls > 0 ? loadCalls + " calls in all" : loadTime.toSeconds() + " s each");
    Benchmark.row(
        "baseline: python3 -c pass (no sandbox, " + oneShotCalls / 2 + " spawns)",
        Benchmark.spawn(List.of("/usr/bin/python3", "-c", "pass"), oneShotCalls / 2));
    inProcess();
    http();
    stdio();
    System.out.printf("%nload average at the end: %s%n", LiveBench.loadAverage());
  }

  // -- in-process: the session's cost with no transport ------------------------------------------

  private void inProcess() throws Exception {
    DefaultSandboxService service =
        TestServices.start(
            dataDir.resolve("in-process"), Map.of("max_sessions", Integer.toString(maxSessions())));
    try {
      String warm = service.createSession("bench-warm", null).sessionId();
      Benchmark.row(
          "baseline: print(1) in a session, in-process (" + warmCalls + " calls)",
          timed(
              warmCalls,
              100,
              () -> check(service.run(new ExecutionRequest("print(1)", warm, null, null)))));
      service.closeSession(warm);
      List<Throughput.Call> load = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        String id = service.createSession("load-" + i, null).sessionId();
        load.add(() -> check(service.run(new ExecutionRequest("pass", id, null, null))));
      }
      throughput(
          "baseline: pass in-process, " + clients + " threads",
          load,
          ProcessHandle.current().pid());
    } finally {
      service.close();
    }
  }

  private static void check(RunRecord r) {
    if (r.status() != RunStatus.SUCCEEDED) {
      throw new IllegalStateException("run " + r.runId() + ": " + r.status() + " " + r.message());
    }
  }

  // -- HTTP ---------------------------------------------------------------------------------------

  private void http() throws Exception {
    List<String> command =
        List.of(
            launcher.toString(),
            "serve",
            "--http",
            "--port",
            "0",
            "--data-dir",
            dataDir.resolve("http").toString(),
            "--set",
            "http_auth=none",
            "--set",
            "rate_limit_per_second=0",
            "--set",
            "max_sessions=" + maxSessions());
    Process server =
        new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    try {
      URI base = URI.create(awaitUrl(server));
      System.out.printf(
          "%nHTTP, one call at a time on keep-alive (load average %s)%n", LiveBench.loadAverage());
      rawHttp(base);
      sdkHttp(base);
      rest(base);
      System.out.printf("%nHTTP throughput (load average %s)%n", LiveBench.loadAverage());
      mcpLoad(base, server.pid());
      restLoad(base, server.pid());
      IdleMcpSessions.run(base, server.pid(), idleSessions);
    } finally {
      server.destroy();
      server.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private void rawHttp(URI base) throws Exception {
    RawRestClient plain = new RawRestClient(RawMcpClient.newHttpClient(), base);
    RawMcpClient mcp = new RawMcpClient(RawMcpClient.newHttpClient(), base).open();
    serverRow("GET /health (1000 calls, raw HTTP)", plain, "GET /health", 1000, 100, plain::health);
    serverRow(
        "ping (1000 calls, raw MCP HTTP)",
        plain,
        "POST /mcp",
        1000,
        100,
        () -> mcp.request("ping", null));
    serverRow(
        "tools/list (1000 calls, raw MCP HTTP)",
        plain,
        "POST /mcp",
        1000,
        100,
        () -> mcp.request("tools/list", null));
    mcp.callTool("create_session", "{\"session_id\":\"raw-warm\"}");
    serverRow(
        "run_python print(1) in a session (" + warmCalls + " calls, raw MCP HTTP)",
        plain,
        "POST /mcp",
        warmCalls,
        100,
        () -> mcp.callTool("run_python", "{\"session_id\":\"raw-warm\",\"code\":\"print(1)\"}"));
    mcp.callTool("close_session", "{\"session_id\":\"raw-warm\"}");
    serverRow(
        "run_python print(1), one-shot (" + oneShotCalls + " calls, raw MCP HTTP)",
        plain,
        "POST /mcp",
        oneShotCalls,
        20,
        () -> mcp.callTool("run_python", "{\"code\":\"print(1)\"}"));
  }

  private void sdkHttp(URI base) {
    HttpClientStreamableHttpTransport transport =
        HttpClientStreamableHttpTransport.builder(base.toString()).endpoint("/mcp").build();
    try (McpSyncClient http =
        McpClient.sync(transport).requestTimeout(Duration.ofSeconds(120)).build()) {
      http.initialize();
      measure("SDK, HTTP", http, warmCalls, oneShotCalls);
    }
  }

  private void rest(URI base) throws Exception {
    RawRestClient rest = new RawRestClient(RawMcpClient.newHttpClient(), base);
    serverRow(
        "REST POST /api/v1/runs print(1), one-shot (" + oneShotCalls + " calls)",
        rest,
        "POST /api/v1/*",
        oneShotCalls,
        20,
        () -> rest.run("print(1)", null));
    rest.createSession("rest-warm");
    serverRow(
        "REST POST /api/v1/runs print(1) in a session (" + warmCalls + " calls)",
        rest,
        "POST /api/v1/*",
        warmCalls,
        100,
        () -> rest.run("print(1)", "rest-warm"));
    rest.closeSession("rest-warm");
  }

  /**
   * A row with, after it, the mean of the same calls as the client saw them and as the server did:
   * its {@code /metrics}, read after the warm-up and after the calls, time a request from the first
   * filter to the last (no connection I/O, no client).
   *
   * @param request method and route as {@code /metrics} tags them, e.g. {@code POST /mcp}
   */
  private static void serverRow(
      String what,
      RawRestClient metrics,
      String request,
      int calls,
      int warmup,
      Throughput.Call call)
      throws Exception {
    timed(warmup, 0, call);
    String method = request.substring(0, request.indexOf(' '));
    String route = request.substring(request.indexOf(' ') + 1);
    double[] before = metrics.serverTotals(method, route);
    List<Double> ms = timed(calls, 0, call);
    double[] after = metrics.serverTotals(method, route);
    Benchmark.row(
        what,
        ms,
        String.format(
            Locale.ROOT,
            "   mean %.2f, server %.2f",
            ms.stream().mapToDouble(Double::doubleValue).average().orElse(0),
            (after[1] - before[1]) * 1000 / Math.max(1, after[0] - before[0])));
  }

  private void mcpLoad(URI base, long pid) throws Exception {
    List<RawMcpClient> open = new ArrayList<>();
    List<Throughput.Call> load = new ArrayList<>();
    HttpClient http = RawMcpClient.newHttpClient(); // a keep-alive connection per call in flight
    for (int i = 0; i < clients; i++) {
      RawMcpClient c = new RawMcpClient(http, base).open();
      String session = "{\"session_id\":\"load-mcp-" + i + "\"";
      c.callTool("create_session", session + "}");
      open.add(c);
      load.add(() -> c.callTool("run_python", session + ",\"code\":\"pass\"}"));
    }
    throughput(
        "run_python pass, " + clients + " clients (raw MCP HTTP)",
        load,
        pid,
        new RawRestClient(http, base),
        "POST /mcp");
    for (int i = 0; i < clients; i++) {
      open.get(i).callTool("close_session", "{\"session_id\":\"load-mcp-" + i + "\"}");
    }
  }

  private void restLoad(URI base, long pid) throws Exception {
    List<RawRestClient> open = new ArrayList<>();
    List<Throughput.Call> load = new ArrayList<>();
    HttpClient http = RawMcpClient.newHttpClient();
    for (int i = 0; i < clients; i++) {
      RawRestClient c = new RawRestClient(http, base);
      String session = "load-rest-" + i;
      c.createSession(session);
      open.add(c);
      load.add(() -> c.run("pass", session));
    }
    throughput(
        "POST /api/v1/runs pass, " + clients + " clients (REST)",
        load,
        pid,
        new RawRestClient(http, base),
        "POST /api/v1/*");
    for (int i = 0; i < clients; i++) {
      open.get(i).closeSession("load-rest-" + i);
    }
  }

  // -- stdio --------------------------------------------------------------------------------------

  private void stdio() throws Exception {
    System.out.printf("%nstdio (load average %s)%n", LiveBench.loadAverage());
    List<String> command =
        List.of(
            launcher.toString(),
            "serve",
            "--data-dir",
            dataDir.resolve("stdio").toString(),
            "--set",
            "max_sessions=" + maxSessions());
    try (RawStdioClient raw = new RawStdioClient(command)) {
      Benchmark.row(
          "ping (1000 calls, raw stdio)", timed(1000, 100, () -> raw.request("ping", null)));
      Benchmark.row(
          "tools/list (1000 calls, raw stdio)",
          timed(1000, 100, () -> raw.request("tools/list", null)));
      raw.callTool("create_session", "{\"session_id\":\"raw-warm\"}");
      Benchmark.row(
          "run_python print(1) in a session (" + warmCalls + " calls, raw stdio)",
          timed(
              warmCalls,
              100,
              () ->
                  raw.callTool(
                      "run_python", "{\"session_id\":\"raw-warm\",\"code\":\"print(1)\"}")));
      raw.callTool("close_session", "{\"session_id\":\"raw-warm\"}");
      List<Throughput.Call> load = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        String session = "{\"session_id\":\"load-stdio-" + i + "\"";
        raw.callTool("create_session", session + "}");
        load.add(() -> raw.callTool("run_python", session + ",\"code\":\"pass\"}"));
      }
      throughput(
          "run_python pass, " + clients + " threads on one pipe (raw stdio)", load, raw.pid());
    }
    StdioClientTransport transport =
        new StdioClientTransport(
            ServerParameters.builder(launcher.toString())
                .args("serve", "--data-dir", dataDir.resolve("stdio").toString())
                .build(),
            McpJsonDefaults.getMapper());
    transport.setStdErrorHandler(line -> {});
    try (McpSyncClient client =
        McpClient.sync(transport).requestTimeout(Duration.ofSeconds(120)).build()) {
      client.initialize();
      measure("SDK, stdio", client, warmCalls, oneShotCalls);
    }
  }

  // -- shared -------------------------------------------------------------------------------------

  private static void measure(String how, McpSyncClient client, int warmCalls, int oneShotCalls) {
    List<Double> list = new ArrayList<>();
    for (int i = 0; i < 1100; i++) {
      long t0 = System.nanoTime();
      client.listTools();
      if (i >= 100) {
        list.add((System.nanoTime() - t0) / 1e6);
      }
    }
    Benchmark.row("tools/list (1000 calls, " + how + ")", list);
    Benchmark.call(client, "create_session", Map.of("session_id", "bench-warm"));
    Benchmark.row(
        "run_python print(1) in a session (" + warmCalls + " calls, " + how + ")",
        Benchmark.time(
            client,
            "run_python",
            Map.of("session_id", "bench-warm", "code", "print(1)"),
            warmCalls,
            100));
    Benchmark.call(client, "close_session", Map.of("session_id", "bench-warm"));
    Benchmark.row(
        "run_python print(1), one-shot (" + oneShotCalls + " calls, " + how + ")",
        Benchmark.time(client, "run_python", Map.of("code", "print(1)"), oneShotCalls, 20));
  }

  /** Warms up, then clients' worth of calls; a failed load is reported and the run goes on. */
  private void throughput(String what, List<Throughput.Call> load, long serverPid) {
    throughput(what, load, serverPid, null, null);
  }

  /**
   * With {@code metrics}, also the server's own mean time per request of the load ({@code request}
   * as {@link #serverRow} takes it): the rest of the latency is queueing, connections and clients.
   */
  private void throughput(
      String what,
      List<Throughput.Call> load,
      long serverPid,
      RawRestClient metrics,
      String request) {
    try {
      for (Throughput.Call c : load) {
        for (int i = 0; i < 20; i++) {
          c.call();
        }
      }
      String method = request == null ? null : request.substring(0, request.indexOf(' '));
      String route = request == null ? null : request.substring(request.indexOf(' ') + 1);
      double[] before = metrics == null ? null : metrics.serverTotals(method, route);
      Throughput.Result result = Throughput.run(load, loadTime, loadCalls, serverPid);
      Throughput.print(what, result);
      if (metrics != null) {
        double[] after = metrics.serverTotals(method, route);
        System.out.printf(
            Locale.ROOT,
            "  mean per call %.2f ms at the client, %.2f ms in the server (its /metrics: first"
                + " filter to last)%n",
            result.ms().stream().mapToDouble(Double::doubleValue).average().orElse(0),
            (after[1] - before[1]) * 1000 / Math.max(1, after[0] - before[0]));
      }
    } catch (Exception e) {
      System.out.printf("%-66s FAILED: %s%n", what, e);
    }
  }

  /** Milliseconds of each call after the warm-up ones. */
  private static List<Double> timed(int calls, int warmup, Throughput.Call call) throws Exception {
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < warmup + calls; i++) {
      long t0 = System.nanoTime();
      call.call();
      if (i >= warmup) {
        ms.add((System.nanoTime() - t0) / 1e6);
      }
    }
    return ms;
  }

  /** The URL the server prints on stderr; the rest of stderr is drained and dropped. */
  static String awaitUrl(Process server) throws IOException {
    BufferedReader err =
        new BufferedReader(new InputStreamReader(server.getErrorStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = err.readLine()) != null) {
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        Thread drain =
            new Thread(
                () -> {
                  try {
                    err.transferTo(Writer.nullWriter());
                  } catch (IOException e) {
                    // ended
                  }
                });
        drain.setDaemon(true);
        drain.start();
        return m.group(1);
      }
    }
    throw new IllegalStateException("serve --http ended before listening");
  }
}

package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import dev.pysandbox.backend.ProcessTable;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real server ({@code bin/pysandbox serve --http --port 0}, started from a directory that is
 * not the checkout, {@code http_auth=none} on loopback) driven by the MCP SDK's own Streamable HTTP
 * client.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class HttpMcpIT {
  @TempDir static Path dataDir;
  @TempDir static Path workDir;
  static HttpServerProcess server;

  /** The client of the tests' own looks at a server (REST, health), shared by the polls. */
  private static final HttpClient LOOKS = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    server =
        HttpServerProcess.start(
            dataDir,
            workDir,
            "--set",
            "http_auth=none",
            "--set",
            "rate_limit_per_second=0",
            "--set",
            "max_sessions=40");
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  static McpSyncClient client(URI base) {
    HttpClientStreamableHttpTransport transport =
        HttpClientStreamableHttpTransport.builder(base.toString()).endpoint("/mcp").build();
    McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(90)).build();
    client.initialize();
    return client;
  }

  @Test
  void runPython_withAProgressToken_overHttp_reportsProgressWithTheLatestLine() {
    List<McpSchema.ProgressNotification> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
    HttpClientStreamableHttpTransport transport =
        HttpClientStreamableHttpTransport.builder(server.uri().toString()).endpoint("/mcp").build();
    try (McpSyncClient c =
        McpClient.sync(transport)
            .requestTimeout(Duration.ofSeconds(90))
            .progressConsumer(heard::add)
            .build()) {
      c.initialize();
      CallToolResult r =
          c.callTool(
              CallToolRequest.builder("run_python")
                  .arguments(
                      Map.of(
                          "code",
                          "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n"
                              + "    time.sleep(1)\n"))
                  .progressToken("http-progress")
                  .build());
      assertThat(r.isError()).isFalse();
      assertThat(heard).hasSizeGreaterThanOrEqualTo(1);
      assertThat(heard).allMatch(p -> "http-progress".equals(p.progressToken()));
      assertThat(heard.get(heard.size() - 1).message()).startsWith("tick ");
    }
  }

  static CallToolResult call(McpSyncClient client, String tool, Map<String, Object> args) {
    return client.callTool(CallToolRequest.builder(tool).arguments(args).build());
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> json(CallToolResult r) {
    return (Map<String, Object>) r.structuredContent();
  }

  @Test
  void initialize_negotiatesTheNewestProtocol_andNamesTheServer() {
    try (McpSyncClient client = client(server.uri())) {
      assertThat(client.getServerInfo().name()).isEqualTo("pysandbox");
      assertThat(client.getCurrentInitializationResult().protocolVersion())
          .isIn("2025-11-25", "2025-06-18");
      assertThat(client.getServerInstructions()).contains("run_python");
    }
  }

  @Test
  void toolsList_isTheStdioToolList() throws Exception {
    List<McpSchema.Tool> overHttp;
    try (McpSyncClient client = client(server.uri())) {
      overHttp = client.listTools().tools();
    }
    Path stdioData = Files.createTempDirectory(workDir, "stdio");
    StdioClientTransport transport =
        new StdioClientTransport(
            ServerParameters.builder(TestServices.launcher().toString())
                .args("serve", "--data-dir", stdioData.toString())
                .build(),
            McpJsonDefaults.getMapper());
    McpSyncClient stdio = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build();
    List<McpSchema.Tool> overStdio;
    try {
      stdio.initialize();
      overStdio = stdio.listTools().tools();
    } finally {
      stdio.closeGracefully();
    }
    assertThat(overHttp).extracting(McpSchema.Tool::name).contains("run_python", "check_setup");
    assertThat(overHttp).isEqualTo(overStdio);
  }

  @Test
  void runPython_print_comesBackOnStdout() {
    try (McpSyncClient client = client(server.uri())) {
      CallToolResult r = call(client, "run_python", Map.of("code", "print(1)"));
      assertThat(r.isError()).as(String.valueOf(r.content())).isFalse();
      assertThat(json(r)).containsEntry("stdout", "1\n").containsEntry("status", "succeeded");
    }
  }

  @Test
  void session_keepsAVariableAcrossCalls() {
    try (McpSyncClient client = client(server.uri())) {
      call(client, "run_python", Map.of("code", "x = 41", "session_id", "http-keep"));
      CallToolResult r =
          call(client, "run_python", Map.of("code", "x + 1", "session_id", "http-keep"));
      assertThat(r.isError()).isFalse();
      assertThat(json(r).get("result")).isEqualTo(Map.of("text/plain", "42"));
      call(client, "close_session", Map.of("session_id", "http-keep"));
    }
  }

  @Test
  void matplotlibChart_comesBackAsImageContent() {
    try (McpSyncClient client = client(server.uri())) {
      CallToolResult r =
          call(
              client,
              "run_python",
              Map.of(
                  "code",
                  "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title('x')"));
      assertThat(r.isError()).as(String.valueOf(r.content())).isFalse();
      assertThat(r.content())
          .anySatisfy(
              c -> {
                assertThat(c).isInstanceOf(McpSchema.ImageContent.class);
                assertThat(((McpSchema.ImageContent) c).mimeType()).isEqualTo("image/png");
              });
    }
  }

  @Test
  void sixteenClientsInParallel_eachWithItsOwnSession_eachGetTheirOwnAnswers() throws Exception {
    int n = 16;
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      List<CompletableFuture<String>> answers = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int me = i;
        answers.add(
            CompletableFuture.supplyAsync(
                () -> {
                  try (McpSyncClient client = client(server.uri())) {
                    String session = "par-" + me;
                    call(client, "run_python", Map.of("code", "v = " + me, "session_id", session));
                    CallToolResult r =
                        call(
                            client,
                            "run_python",
                            Map.of("code", "print(v * 1000 + 7)", "session_id", session));
                    call(client, "close_session", Map.of("session_id", session));
                    return (String) json(r).get("stdout");
                  }
                },
                pool));
      }
      for (int i = 0; i < n; i++) {
        assertThat(answers.get(i).get(150, TimeUnit.SECONDS)).isEqualTo((i * 1000 + 7) + "\n");
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void healthAndReady_answerWithoutAKey_andUnknownPathsAreJson404() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    URI base = server.uri();
    HttpResponse<String> health =
        http.send(
            HttpRequest.newBuilder(base.resolve("/health")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(health.body()).isEqualTo("{\"status\":\"ok\"}");
    HttpResponse<String> ready =
        http.send(
            HttpRequest.newBuilder(base.resolve("/ready")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(ready.statusCode()).isEqualTo(200);
    HttpResponse<String> missing =
        http.send(
            HttpRequest.newBuilder(base.resolve("/nope")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.body()).contains("\"code\":\"not_found\"");
  }

  @Test
  void sigterm_duringALongRun_exitsZeroWithinTheGrace_andLeavesNoSandbox(@TempDir Path data)
      throws Exception {
    int grace = 3;
    HttpServerProcess s =
        HttpServerProcess.start(
            data, workDir, "--set", "http_auth=none", "--set", "shutdown_grace=" + grace);
    try {
      McpSyncClient client = client(s.uri());
      String marker = "sleepy_" + System.nanoTime();
      CompletableFuture<CallToolResult> running =
          CompletableFuture.supplyAsync(
              () ->
                  call(
                      client,
                      "run_python",
                      Map.of("code", "import time\n" + marker + " = 1\ntime.sleep(30)")));
      Await.until("the long run running", () -> runningRuns(s.uri()), n -> n == 1);
      McpSyncClient other = client(s.uri());
      CompletableFuture<CallToolResult> shortRun =
          CompletableFuture.supplyAsync(
              () ->
                  call(
                      other,
                      "run_python",
                      Map.of("code", "import time\ntime.sleep(1.5)\nprint('finished')")));
      Await.until("both runs running", () -> runningRuns(s.uri()), n -> n == 2);
      s.process.destroy();
      assertThat(s.process.waitFor(grace + 10, TimeUnit.SECONDS)).isTrue();
      assertThat(s.process.exitValue()).as(String.join("\n", s.stderr)).isZero();
      // In-flight requests got the grace: the short run ended within it, the long one was cut.
      CallToolResult r = running.get(10, TimeUnit.SECONDS);
      assertThat(json(r)).containsEntry("status", "cancelled");
      assertThat((String) json(r).get("message"))
          .contains("told to stop")
          .contains("shutdown_grace");
      CallToolResult done = shortRun.get(10, TimeUnit.SECONDS);
      assertThat(json(done))
          .as("a run that ends within the grace")
          .containsEntry("status", "succeeded");
      assertThat(ProcessTable.withCommandLineContaining(data.toString())).isEmpty();
    } finally {
      s.close();
    }
  }

  @Test
  void httpAndStdio_serveOneCore_fromOneProcess_andEndOfStdinStopsBoth(@TempDir Path data)
      throws Exception {
    CompletableFuture<URI> url = new CompletableFuture<>();
    StdioClientTransport transport =
        new StdioClientTransport(
            ServerParameters.builder(TestServices.launcher().toString())
                .args(
                    "serve",
                    "--http",
                    "--stdio",
                    "--port",
                    "0",
                    "--set",
                    "http_auth=none",
                    "--data-dir",
                    data.toString())
                .build(),
            McpJsonDefaults.getMapper());
    transport.setStdErrorHandler(
        line -> {
          int at = line.indexOf("listening on ");
          if (at >= 0) {
            url.complete(URI.create(line.substring(at + "listening on ".length()).strip()));
          }
        });
    McpSyncClient stdio = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build();
    try {
      stdio.initialize();
      call(stdio, "run_python", Map.of("code", "shared = 'both'", "session_id", "two-faces"));
      try (McpSyncClient http = client(url.get(30, TimeUnit.SECONDS))) {
        CallToolResult r =
            call(http, "run_python", Map.of("code", "print(shared)", "session_id", "two-faces"));
        assertThat(json(r)).containsEntry("stdout", "both\n");
      }
    } finally {
      stdio.closeGracefully();
    }
    URI base = url.get();
    Await.until(
        "the HTTP face stops when stdin ends",
        Duration.ofSeconds(20),
        () -> answers(base.resolve("/health")),
        answers -> !answers);
  }

  /** How many runs the server records as running, read over REST. */
  private static int runningRuns(URI base) {
    try {
      HttpResponse<String> r =
          LOOKS.send(
              HttpRequest.newBuilder(base.resolve("/api/v1/runs?status=running")).build(),
              HttpResponse.BodyHandlers.ofString());
      return dev.pysandbox.api.Json.mapper().readTree(r.body()).path("runs").size();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Whether anything answers at {@code uri}; false once nothing listens there. */
  private static boolean answers(URI uri) {
    try {
      LOOKS.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding());
      return true;
    } catch (java.io.IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void noKeysOffLoopback_isRefusedWithOneLineAndExit2() throws Exception {
    ServerProcess.Result r =
        ServerProcess.run(
            dataDir, null, "serve", "--http", "--host", "0.0.0.0", "--set", "http_auth=none");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.stderr().strip().lines()).hasSize(1);
    assertThat(r.stderr()).contains("http_auth").contains("loopback").contains("0.0.0.0");
    assertThat(r.stdout()).isEmpty();
  }

  @Test
  void keysWithoutAnyKey_isRefusedWithOneLineAndExit2() throws Exception {
    ServerProcess.Result r = ServerProcess.run(dataDir, null, "serve", "--http", "--port", "0");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.stderr().strip().lines()).hasSize(1);
    assertThat(r.stderr()).contains("no API key");
  }
}

package dev.pysandbox.bench;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HTTP face's figures (part of {@link Benchmark}, {@code BENCH_ONLY=http}): the MCP SDK's
 * Streamable HTTP client over one keep-alive connection to {@code serve --http} ({@code
 * http_auth=none}, no rate limit), next to the same calls over stdio in the same run — a bare
 * {@code tools/list}, and {@code run_python print(1)} one-shot and in an existing session.
 */
final class HttpBench {
  private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

  private HttpBench() {}

  static void run(Path launcher, Path dataDir, int warmCalls, int oneShotCalls) throws Exception {
    Process server =
        new ProcessBuilder(
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
                "rate_limit_per_second=0")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    try {
      String url = awaitUrl(server);
      HttpClientStreamableHttpTransport transport =
          HttpClientStreamableHttpTransport.builder(url).endpoint("/mcp").build();
      try (McpSyncClient http =
          McpClient.sync(transport).requestTimeout(Duration.ofSeconds(120)).build()) {
        http.initialize();
        measure("HTTP", http, warmCalls, oneShotCalls);
      }
    } finally {
      server.destroy();
      server.waitFor(30, TimeUnit.SECONDS);
    }
    StdioClientTransport stdio =
        new StdioClientTransport(
            ServerParameters.builder(launcher.toString())
                .args("serve", "--data-dir", dataDir.resolve("stdio").toString())
                .build(),
            McpJsonDefaults.getMapper());
    stdio.setStdErrorHandler(line -> {});
    try (McpSyncClient client =
        McpClient.sync(stdio).requestTimeout(Duration.ofSeconds(120)).build()) {
      client.initialize();
      measure("stdio", client, warmCalls, oneShotCalls);
    }
  }

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
        "run_python print(1) in an existing session (" + warmCalls + " calls, " + how + ")",
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

  private static String awaitUrl(Process server) throws Exception {
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
                    err.transferTo(java.io.Writer.nullWriter());
                  } catch (java.io.IOException e) {
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

package dev.pysandbox.bench;

import dev.pysandbox.backend.bwrap.SandboxFlags;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark harness (not a test): prints pysandbox's figures next to baselines measured in the
 * same run on the same machine. Run it with {@code scripts/bench.sh}.
 *
 * <p>Figures: JVM start to the first tools/list answer; one-shot {@code run_python} of {@code
 * print(1)} over stdio from one MCP client; and the bare {@code bwrap ... python3 -c pass} spawn
 * with the sandbox's own flags.
 */
public final class Benchmark {
  private final Path launcher;
  private final Path dataDir;

  private Benchmark(Path launcher, Path dataDir) {
    this.launcher = launcher;
    this.dataDir = dataDir;
  }

  public static void main(String[] args) throws Exception {
    Path launcher = Path.of(args.length > 0 ? args[0] : "bin/pysandbox").toAbsolutePath();
    Path dataDir = Files.createTempDirectory("pysandbox-bench");
    int calls = Integer.getInteger("bench.calls", 200);
    Benchmark b = new Benchmark(launcher, dataDir);
    System.out.printf(
        "pysandbox benchmark — %d cores, %s, data dir %s%n%n",
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), dataDir);
    b.startup(10);
    b.oneShot(calls);
    b.baselines(calls / 2);
  }

  // -- JVM start to first tools/list
  // ---------------------------------------------------------------

  private void startup(int rounds) throws Exception {
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < rounds; i++) {
      long t0 = System.nanoTime();
      Process p =
          new ProcessBuilder(launcher.toString(), "serve", "--data-dir", dataDir.toString())
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      OutputStream in = p.getOutputStream();
      BufferedReader out =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      send(
          in,
          "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
              + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}");
      out.readLine();
      send(in, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
      send(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
      String line = out.readLine();
      ms.add((System.nanoTime() - t0) / 1e6);
      if (line == null || !line.contains("run_python")) {
        throw new IllegalStateException("no tools/list answer: " + line);
      }
      in.close();
      p.waitFor(20, TimeUnit.SECONDS);
    }
    row("JVM start -> first tools/list answer (" + rounds + " starts)", ms);
  }

  private static void send(OutputStream in, String json) throws IOException {
    in.write((json + "\n").getBytes(StandardCharsets.UTF_8));
    in.flush();
  }

  // -- one-shot run_python ------------------------------------------------------------------------

  private void oneShot(int calls) {
    try (McpSyncClient client = client(Map.of())) {
      List<Double> ms = time(client, "run_python", Map.of("code", "print(1)"), calls, 20);
      row("run_python print(1), one-shot sandbox (" + calls + " calls, stdio)", ms);
    }
  }

  McpSyncClient client(Map<String, String> settings) {
    List<String> args = new ArrayList<>(List.of("serve", "--data-dir", dataDir.toString()));
    settings.forEach((k, v) -> args.addAll(List.of("--set", k + "=" + v)));
    ServerParameters params = ServerParameters.builder(launcher.toString()).args(args).build();
    StdioClientTransport transport = new StdioClientTransport(params, McpJsonDefaults.getMapper());
    transport.setStdErrorHandler(line -> {});
    McpSyncClient client =
        McpClient.sync(transport).requestTimeout(Duration.ofSeconds(120)).build();
    client.initialize();
    return client;
  }

  static List<Double> time(
      McpSyncClient client, String tool, Map<String, Object> args, int calls, int warmup) {
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < warmup + calls; i++) {
      long t0 = System.nanoTime();
      CallToolResult r = client.callTool(CallToolRequest.builder(tool).arguments(args).build());
      double elapsed = (System.nanoTime() - t0) / 1e6;
      if (Boolean.TRUE.equals(r.isError())) {
        throw new IllegalStateException(tool + " failed: " + r.content());
      }
      if (i >= warmup) {
        ms.add(elapsed);
      }
    }
    return ms;
  }

  // -- baselines ----------------------------------------------------------------------------------

  private void baselines(int runs) throws Exception {
    List<String> flags = SandboxFlags.forBaseline(dataDir);
    List<String> isolated = new ArrayList<>(flags);
    isolated.addAll(List.of("/usr/bin/python3", "-I", "-S", "-c", "pass"));
    row("baseline: bwrap (same flags) + python3 -I -S -c pass", spawn(isolated, runs));
    List<String> plain = new ArrayList<>(flags);
    plain.addAll(List.of("/usr/bin/python3", "-c", "pass"));
    row("baseline: bwrap (same flags) + python3 -c pass", spawn(plain, runs));
    row(
        "baseline: python3 -c pass (no sandbox)",
        spawn(List.of("/usr/bin/python3", "-c", "pass"), runs));
  }

  private static List<Double> spawn(List<String> argv, int runs) throws Exception {
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < runs + 5; i++) {
      long t0 = System.nanoTime();
      Process p =
          new ProcessBuilder(argv)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (p.waitFor() != 0) {
        throw new IllegalStateException("baseline failed: " + argv);
      }
      if (i >= 5) {
        ms.add((System.nanoTime() - t0) / 1e6);
      }
    }
    return ms;
  }

  // -- printing -----------------------------------------------------------------------------------

  static void row(String what, List<Double> ms) {
    List<Double> s = new ArrayList<>(ms);
    Collections.sort(s);
    System.out.printf(
        Locale.ROOT,
        "%-66s p50 %8.2f ms   p99 %8.2f ms   min %7.2f   max %8.2f%n",
        what,
        pct(s, 50),
        pct(s, 99),
        s.get(0),
        s.get(s.size() - 1));
  }

  static double pct(List<Double> sorted, int p) {
    int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
  }
}

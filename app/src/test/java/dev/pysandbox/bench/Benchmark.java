package dev.pysandbox.bench;

import dev.pysandbox.NodeScript;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The benchmark harness (not a test): prints pysandbox's figures next to baselines measured in the
 * same run on the same machine. Run it with {@code scripts/bench.sh}.
 *
 * <p>Figures: JVM start to the first tools/list answer; one-shot {@code run_python} of {@code
 * print(1)} over stdio from one MCP client; and the bare {@code bwrap ... python3 -c pass} spawn
 * with the sandbox's own flags; executions per second under load from the MCP TypeScript SDK's
 * client (src/test/node/load.mjs: 64 sessions, 32 calls in flight); {@code list_runs} latency while
 * a sandbox is under attack (fork bomb, memory hog, output flood, disk filler, busy loop).
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
    int warmCalls = Integer.getInteger("bench.warmCalls", 1000);
    int loadCalls = Integer.getInteger("bench.loadCalls", 10_000);
    if ("limits".equals(System.getProperty("bench.only"))) {
      b.limitsBreakdown(calls);
      return;
    }
    if ("http".equals(System.getProperty("bench.only"))) {
      HttpBench.run(launcher, dataDir, warmCalls, calls);
      return;
    }
    if ("live".equals(System.getProperty("bench.only"))) {
      LiveBench.run(launcher, dataDir, warmCalls);
      return;
    }
    if ("audit".equals(System.getProperty("bench.only"))) {
      AuditBench.run(dataDir, warmCalls);
      return;
    }
    if ("packages".equals(System.getProperty("bench.only"))) {
      PackagesBench.run(dataDir, calls, warmCalls);
      return;
    }
    if ("backends".equals(System.getProperty("bench.only"))) {
      BackendsBench.run(
          dataDir,
          Integer.getInteger("bench.backendRuns", 20),
          warmCalls,
          Integer.getInteger("bench.idleSessions", 10));
      return;
    }
    if ("agents".equals(System.getProperty("bench.only"))) {
      AgentBench.run(dataDir, warmCalls);
      return;
    }
    if ("analysis".equals(System.getProperty("bench.only"))) {
      AnalysisBench.run(dataDir, warmCalls);
      return;
    }
    if ("load".equals(System.getProperty("bench.only"))) {
      b.load(loadCalls);
      return;
    }
    if ("startup".equals(System.getProperty("bench.only"))) {
      b.startupFromHereAndRoot(Integer.getInteger("bench.starts", 20));
      return;
    }
    int attackSeconds = Integer.getInteger("bench.attackSeconds", 5);
    int timeoutRounds = Integer.getInteger("bench.timeoutRounds", 5);
    if ("responsiveness".equals(System.getProperty("bench.only"))) {
      b.responsiveness(attackSeconds);
      b.timeoutOvershoot(timeoutRounds);
      return;
    }
    b.startupFromHereAndRoot(10);
    b.oneShot(calls);
    b.sessions(warmCalls);
    b.load(loadCalls);
    b.responsiveness(attackSeconds);
    b.timeoutOvershoot(timeoutRounds);
    b.baselines(calls / 2);
    b.jupyter(Math.min(warmCalls, 500));
    if (!Boolean.getBoolean("bench.skipScale")) {
      b.scale(List.of(10, 100, 1000));
    }
  }

  // -- JVM start to first tools/list
  // ---------------------------------------------------------------

  /**
   * From the launcher's checkout and from {@code /}, alternating: a desktop MCP client starts the
   * server from a directory of its own, and the class-data archive must help there too. Lines on
   * stdout that are not protocol are counted and reported, not fatal, so that a broken launcher can
   * be timed.
   */
  private void startupFromHereAndRoot(int rounds) throws Exception {
    Path here = launcher.getParent().getParent();
    Path root = Path.of("/");
    List<Double> fromHere = new ArrayList<>();
    List<Double> fromRoot = new ArrayList<>();
    int[] stray = new int[2];
    for (int i = 0; i < rounds; i++) {
      fromHere.add(startup(here, stray, 0));
      fromRoot.add(startup(root, stray, 1));
    }
    row("JVM start -> first tools/list answer (" + rounds + " starts, from checkout)", fromHere);
    row("JVM start -> first tools/list answer (" + rounds + " starts, from /)", fromRoot);
    if (stray[0] + stray[1] > 0) {
      System.out.printf(
          "  NOT PROTOCOL: %d lines on stdout from the checkout, %d from /%n", stray[0], stray[1]);
    }
  }

  /** Milliseconds from spawn to the tools/list answer; adds lines that are not JSON to stray[i]. */
  private double startup(Path workingDir, int[] stray, int i) throws Exception {
    long t0 = System.nanoTime();
    Process p =
        new ProcessBuilder(launcher.toString(), "serve", "--data-dir", dataDir.toString())
            .directory(workingDir.toFile())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    OutputStream in = p.getOutputStream();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    send(
        in,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
            + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}");
    stray[i] += skipToAnswer(out, 1, workingDir);
    send(in, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    send(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    stray[i] += skipToAnswer(out, 2, workingDir);
    double ms = (System.nanoTime() - t0) / 1e6;
    in.close();
    p.waitFor(20, TimeUnit.SECONDS);
    return ms;
  }

  /** Reads up to the answer with this id; returns how many lines before it were not JSON. */
  private static int skipToAnswer(BufferedReader out, int id, Path workingDir) throws IOException {
    int stray = 0;
    String line;
    while ((line = out.readLine()) != null) {
      if (!line.startsWith("{")) {
        stray++;
      } else if (line.contains("\"id\":" + id + ",")) {
        return stray;
      }
    }
    throw new IllegalStateException("from " + workingDir + ": no answer " + id + " on stdout");
  }

  private static void send(OutputStream in, String json) throws IOException {
    in.write((json + "\n").getBytes(StandardCharsets.UTF_8));
    in.flush();
  }

  // -- one-shot run_python ------------------------------------------------------------------------

  /**
   * One-shot latency with the sandbox's cgroup, seccomp filter and rlimits (the default), and
   * without cgroup and seccomp, in the same run: the difference is what the limits cost. Twice:
   * back to back (calls come faster than the pool refills, so every sandbox start is on the path)
   * and at an agent's pace (100 ms between calls, the pool has a sandbox ready).
   */
  private void oneShot(int calls) {
    Map<String, String> off = Map.of("cgroups", "false", "seccomp", "false");
    List<Double> limited;
    List<Double> bare;
    List<Double> limitedPaced;
    List<Double> barePaced;
    try (McpSyncClient client = client(Map.of())) {
      limited = time(client, "run_python", Map.of("code", "print(1)"), calls, 20);
      limitedPaced = paced(client, calls / 2);
    }
    try (McpSyncClient client = client(off)) {
      bare = time(client, "run_python", Map.of("code", "print(1)"), calls, 20);
      barePaced = paced(client, calls / 2);
    }
    row("run_python print(1), one-shot sandbox (" + calls + " calls back to back, stdio)", limited);
    row("  same, without cgroup and seccomp (cgroups=false seccomp=false)", bare);
    overhead(limited, bare);
    row("run_python print(1), one-shot, 100 ms apart (" + calls / 2 + " calls)", limitedPaced);
    row("  same, without cgroup and seccomp", barePaced);
    overhead(limitedPaced, barePaced);
  }

  private static List<Double> paced(McpSyncClient client, int calls) {
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      sleepQuietly(100);
      ms.addAll(time(client, "run_python", Map.of("code", "print(1)"), 1, 0));
    }
    return ms;
  }

  private static void overhead(List<Double> with, List<Double> without) {
    List<Double> a = new ArrayList<>(with);
    List<Double> b = new ArrayList<>(without);
    Collections.sort(a);
    Collections.sort(b);
    System.out.printf(
        Locale.ROOT, "  overhead of cgroup + seccomp at p50: %+.2f ms%n", pct(a, 50) - pct(b, 50));
  }

  /** One-shot latency with each confinement layer on its own ({@code -Dbench.only=limits}). */
  private void limitsBreakdown(int calls) {
    for (Map<String, String> settings :
        List.of(
            Map.of("cgroups", "false", "seccomp", "false"),
            Map.of("cgroups", "true", "seccomp", "false"),
            Map.of("cgroups", "false", "seccomp", "true"),
            Map.<String, String>of())) {
      try (McpSyncClient client = client(settings)) {
        row(
            "one-shot print(1) " + (settings.isEmpty() ? "(defaults)" : settings.toString()),
            time(client, "run_python", Map.of("code", "print(1)"), calls, 20));
      }
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

  // -- sessions -----------------------------------------------------------------------------------

  private void sessions(int warmCalls) {
    try (McpSyncClient client = client(Map.of("max_sessions", "1000"))) {
      List<Double> create = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        long t0 = System.nanoTime();
        call(client, "create_session", Map.of("session_id", "bench-" + i));
        double ms = (System.nanoTime() - t0) / 1e6;
        if (i >= 10) {
          create.add(ms);
        }
        call(client, "close_session", Map.of("session_id", "bench-" + i));
        sleepQuietly(40); // let the pool refill, as it would between real creates
      }
      row("create_session, pool of 2 (50 creates)", create);
      call(client, "create_session", Map.of("session_id", "warm"));
      List<Double> warm =
          time(
              client,
              "run_python",
              Map.of("session_id", "warm", "code", "print(1)"),
              warmCalls,
              100);
      row("run_python print(1) in an existing session (" + warmCalls + " calls, stdio)", warm);
    }
  }

  static void call(McpSyncClient client, String tool, Map<String, Object> args) {
    CallToolResult r = client.callTool(CallToolRequest.builder(tool).arguments(args).build());
    if (Boolean.TRUE.equals(r.isError())) {
      throw new IllegalStateException(tool + " failed: " + r.content());
    }
  }

  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // -- list_runs while a sandbox is under attack -------------------------------------------------

  /**
   * {@code list_runs} latency (limit 5) over stdio while another thread of the same MCP client
   * keeps one hostile one-shot run in flight, one kind of attack at a time for {@code seconds} each
   * (an attack that is stopped early, at a limit, is started again until the time is up); "idle" is
   * the same with no run in flight. The escape suite asserts that {@code list_runs} keeps answering
   * without error under such attacks; this measures how fast.
   */
  private void responsiveness(int seconds) throws Exception {
    Map<String, String> attacks = new LinkedHashMap<>();
    attacks.put("idle, no run in flight", null);
    attacks.put(
        "busy loop in 8 processes",
        "import os\nfor _ in range(3):\n    os.fork()\n" + "while True:\n    pass");
    attacks.put(
        "fork bomb (pids limit)",
        "import os\nwhile True:\n    try:\n        os.fork()\n"
            + "    except OSError:\n        pass");
    attacks.put(
        "memory hog (memory limit)", "x = []\nwhile True:\n" + "    x.append(bytearray(1 << 20))");
    attacks.put(
        "output flood (output limit)",
        "import os\nwhile True:\n" + "    os.write(1, b'x' * 65536)");
    attacks.put(
        "disk filler (disk quota)",
        "f = open('big', 'wb')\nwhile True:\n" + "    f.write(b'x' * (1 << 20))");
    try (McpSyncClient client = client(Map.of())) {
      for (Map.Entry<String, String> attack : attacks.entrySet()) {
        AtomicBoolean attacking = new AtomicBoolean(true);
        Thread attacker = null;
        if (attack.getValue() != null) {
          Map<String, Object> args = Map.of("code", attack.getValue(), "timeout_seconds", seconds);
          attacker =
              new Thread(
                  () -> {
                    while (attacking.get()) {
                      // Stopped by a limit, the run is an error result: that is the point.
                      client.callTool(
                          CallToolRequest.builder("run_python").arguments(args).build());
                    }
                  },
                  "bench-attacker");
          attacker.start();
          sleepQuietly(300); // the first attack is under way
        }
        List<Double> ms = new ArrayList<>();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < end) {
          ms.addAll(time(client, "list_runs", Map.of("limit", 5), 1, 0));
          sleepQuietly(20);
        }
        attacking.set(false);
        if (attacker != null) {
          attacker.join();
        }
        row("list_runs (limit 5) while: " + attack.getKey(), ms);
      }
    }
  }

  /**
   * How long after its 2 s limit a run's answer comes, whatever the code does: the escape suite and
   * OneShotRunTest assert only that such runs are stopped at their limit with the kill reason
   * {@code timeout} (a bound on the time would fail on a loaded machine); this measures the kill's
   * and the answer's cost.
   */
  private void timeoutOvershoot(int rounds) {
    Map<String, String> codes = new LinkedHashMap<>();
    codes.put("sleeping", "import time\ntime.sleep(120)");
    codes.put("busy loop", "while True: pass");
    codes.put("long C call", "x = 10**10**8");
    try (McpSyncClient client = client(Map.of())) {
      for (Map.Entry<String, String> code : codes.entrySet()) {
        Map<String, Object> args = Map.of("code", code.getValue(), "timeout_seconds", 2);
        List<Double> ms = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
          long t0 = System.nanoTime();
          // A timed-out run is an error result: that is the point.
          client.callTool(CallToolRequest.builder("run_python").arguments(args).build());
          ms.add((System.nanoTime() - t0) / 1e6 - 2000);
        }
        row("answer past a 2 s timeout (" + rounds + " runs): " + code.getKey(), ms);
      }
    }
  }

  // -- load from the TypeScript SDK -------------------------------------------------------------

  /**
   * Executions per second with 64 sessions and 32 calls in flight, from the MCP TypeScript SDK's
   * client, every answer checked; a run that fails prints why and the benchmark goes on.
   */
  private void load(int calls) throws Exception {
    String what = "run_python, 64 sessions, 32 in flight (" + calls + " calls, TS SDK client)";
    NodeScript.Result r =
        NodeScript.run(
            "load.mjs",
            Duration.ofMinutes(10),
            List.of(
                "--sessions=64",
                "--in-flight=32",
                "--calls=" + calls,
                "--deadline-s=580",
                "--",
                launcher.toString(),
                "serve",
                "--data-dir",
                dataDir.toString(),
                "--set",
                "max_sessions=80"));
    com.fasterxml.jackson.databind.JsonNode report;
    try {
      report = r.report();
    } catch (IllegalStateException e) {
      report = null;
    }
    if (r.exit() != 0 || report == null) {
      System.out.printf(
          Locale.ROOT,
          "%-66s FAILED: %s%n",
          what,
          report == null
              ? "no report after " + r.took().toSeconds() + " s: " + r.stderr().strip()
              : report.path("ok").asInt()
                  + " of "
                  + calls
                  + " right; "
                  + report.path("first_errors"));
      return;
    }
    System.out.printf(
        Locale.ROOT,
        "%-66s %6.0f executions/s   p50 %6.2f ms   p99 %7.2f ms%n",
        what,
        report.path("per_second").asDouble(),
        report.path("p50_ms").asDouble(),
        report.path("p99_ms").asDouble());
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

  static List<Double> spawn(List<String> argv, int runs) throws Exception {
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

  // -- Jupyter
  // --------------------------------------------------------------------------------------

  private void jupyter(int calls) throws Exception {
    Path script = Path.of("app/target/test-classes/bench/jupyter_baseline.py");
    Process p =
        new ProcessBuilder("/usr/bin/python3", script.toString(), Integer.toString(calls))
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0 || out.isEmpty()) {
      System.out.println("baseline: Jupyter kernel — could not run (python3-ipykernel installed?)");
      return;
    }
    var json =
        new com.fasterxml.jackson.databind.ObjectMapper()
            .readTree(out.substring(out.lastIndexOf('\n') + 1));
    List<Double> start = new ArrayList<>();
    json.path("start_ms").forEach(n -> start.add(n.asDouble()));
    List<Double> exec = new ArrayList<>();
    json.path("exec_ms").forEach(n -> exec.add(n.asDouble()));
    row("baseline: Jupyter kernel start (3 starts)", start);
    row("baseline: Jupyter execute_interactive('print(1)') (" + exec.size() + " calls)", exec);
  }

  // -- idle sessions at scale ---------------------------------------------------------------------

  private void scale(List<Integer> targets) throws Exception {
    int max = targets.get(targets.size() - 1);
    try (McpSyncClient client = client(Map.of("max_sessions", Integer.toString(max + 10)))) {
      long server = serverPid();
      System.out.printf(
          "%nidle sessions   server threads   server heap used   RSS per sandbox   PSS per sandbox%n");
      int open = 0;
      for (int target : targets) {
        while (open < target) {
          call(client, "create_session", Map.of("session_id", "idle-" + open));
          open++;
        }
        sleepQuietly(3000);
        long[] mem = sandboxMemory(server);
        System.out.printf(
            Locale.ROOT,
            "%13d   %14d   %13.1f MB   %12.1f MB   %12.1f MB   (%d sandboxes incl. the pool, %d"
                + " processes)%n",
            target,
            threads(server),
            heapUsedMb(server),
            mem[0] / 1024.0 / mem[3],
            mem[1] / 1024.0 / mem[3],
            mem[3],
            mem[2]);
      }
    }
  }

  private long serverPid() {
    return ProcessHandle.allProcesses()
        .filter(
            h -> {
              String cmd = h.info().commandLine().orElse("");
              return cmd.contains(" serve ")
                  && cmd.contains(dataDir.toString())
                  && cmd.contains("java");
            })
        .mapToLong(ProcessHandle::pid)
        .max()
        .orElseThrow(() -> new IllegalStateException("server process not found"));
  }

  private static int threads(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("Threads:")) {
        return Integer.parseInt(line.substring(8).trim());
      }
    }
    return -1;
  }

  private static double heapUsedMb(long pid) throws Exception {
    Process p = new ProcessBuilder("jcmd", Long.toString(pid), "GC.heap_info").start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(20, TimeUnit.SECONDS);
    double kb = 0;
    var m = java.util.regex.Pattern.compile("used (\\d+)K").matcher(out);
    while (m.find()) {
      kb += Long.parseLong(m.group(1));
    }
    return kb / 1024.0;
  }

  /**
   * RSS and PSS in KiB of everything under the server's launcher (every sandbox process), the
   * number of processes and the number of sandboxes (runner processes).
   */
  private static long[] sandboxMemory(long serverPid) throws IOException {
    Map<Long, Long> parent = new java.util.HashMap<>();
    try (var dirs = Files.list(Path.of("/proc"))) {
      for (Path d : dirs.toList()) {
        String name = d.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        try {
          String stat = Files.readString(d.resolve("stat"));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          parent.put(Long.parseLong(name), Long.parseLong(f[1]));
        } catch (IOException e) {
          // gone
        }
      }
    }
    long launcher =
        parent.entrySet().stream()
            .filter(e -> e.getValue() == serverPid)
            .map(Map.Entry::getKey)
            .filter(pid -> cmdline(pid).contains("launcher-"))
            .findFirst()
            .orElseThrow();
    long rss = 0;
    long pss = 0;
    long count = 0;
    long sandboxes = 0;
    for (long pid : parent.keySet()) {
      long p = pid;
      while (p > 1 && p != launcher) {
        p = parent.getOrDefault(p, 0L);
      }
      if (p == launcher && pid != launcher) {
        count++;
        if (cmdline(pid).startsWith("/usr/bin/python3")) {
          sandboxes++;
        }
        rss += kb(Path.of("/proc/" + pid + "/status"), "VmRSS:");
        pss += kb(Path.of("/proc/" + pid + "/smaps_rollup"), "Pss:");
      }
    }
    return new long[] {rss, pss, count, Math.max(1, sandboxes)};
  }

  private static String cmdline(long pid) {
    try {
      return new String(
          Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  private static long kb(Path file, String key) {
    try {
      for (String line : Files.readAllLines(file)) {
        if (line.startsWith(key)) {
          return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException | NumberFormatException e) {
      // gone
    }
    return 0;
  }

  // -- printing -----------------------------------------------------------------------------------

  static void row(String what, List<Double> ms) {
    row(what, ms, "");
  }

  /** A row with something after it on the same line ({@code suffix}, e.g. a server-side time). */
  static void row(String what, List<Double> ms, String suffix) {
    List<Double> s = new ArrayList<>(ms);
    Collections.sort(s);
    System.out.printf(
        Locale.ROOT,
        "%-66s p50 %8.2f ms   p99 %8.2f ms   min %7.2f   max %8.2f%s%n",
        what,
        pct(s, 50),
        pct(s, 99),
        s.get(0),
        s.get(s.size() - 1),
        suffix);
  }

  static double pct(List<Double> sorted, int p) {
    int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
  }
}

package dev.pysandbox.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What idle MCP sessions over HTTP cost the server: opens that many ({@code initialize} and {@code
 * notifications/initialized}, from the raw client, never deleted) and reads the server's heap and
 * threads before and after — the heap after a full GC ({@code jcmd GC.run}, then {@code
 * GC.heap_info}), and as {@code /metrics} reports it (no GC) — then checks that every session still
 * answers a {@code ping}.
 */
final class IdleMcpSessions {
  private static final Pattern HEAP_USED = Pattern.compile("total \\d+K, used (\\d+)K");

  private IdleMcpSessions() {}

  private record Reading(
      long heapAfterGc, double metricsHeap, int metricsThreads, int threads, long rssKb) {}

  static void run(URI base, long serverPid, int sessions) throws Exception {
    HttpClient http = RawMcpClient.newHttpClient();
    RawRestClient rest = new RawRestClient(http, base);
    Reading before = read(serverPid, rest);
    List<RawMcpClient> open = new ArrayList<>();
    List<Double> opening = new ArrayList<>();
    for (int i = 0; i < sessions; i++) {
      long t0 = System.nanoTime();
      open.add(new RawMcpClient(http, base).open());
      opening.add((System.nanoTime() - t0) / 1e6);
    }
    Reading after = read(serverPid, rest);
    int answering = 0;
    for (RawMcpClient c : open) {
      c.request("ping", null);
      answering++;
    }
    System.out.printf(
        "%n%d idle MCP sessions over HTTP (initialize + notifications/initialized, raw client, not"
            + " deleted)%n",
        sessions);
    System.out.printf(
        "%-22s %14s %22s %12s %12s %10s%n",
        "", "heap after GC", "/metrics heap (no GC)", "live threads", "OS threads", "RSS");
    print("before", before);
    print("with " + sessions + " sessions", after);
    System.out.printf(
        Locale.ROOT,
        "%-22s %8.0f bytes %16.0f bytes %12.3f %12.3f %7.1f KB%n",
        "per session",
        (after.heapAfterGc() - before.heapAfterGc()) / (double) sessions,
        (after.metricsHeap() - before.metricsHeap()) / sessions,
        (after.metricsThreads() - before.metricsThreads()) / (double) sessions,
        (after.threads() - before.threads()) / (double) sessions,
        (after.rssKb() - before.rssKb()) / (double) sessions);
    Benchmark.row("opening an MCP session (initialize + initialized, raw HTTP)", opening);
    System.out.printf("%d of %d idle sessions answered a ping afterwards%n", answering, sessions);
  }

  private static void print(String what, Reading r) {
    System.out.printf(
        Locale.ROOT,
        "%-22s %11.1f MB %19.1f MB %12d %12d %7.1f MB%n",
        what,
        r.heapAfterGc() / 1048576.0,
        r.metricsHeap() / 1048576.0,
        r.metricsThreads(),
        r.threads(),
        r.rssKb() / 1024.0);
  }

  /** /metrics first (its own garbage goes with the GC that follows), then the heap after GC. */
  private static Reading read(long pid, RawRestClient rest) throws Exception {
    String metrics = rest.metrics();
    double heap = 0;
    int liveThreads = -1;
    for (String line : metrics.split("\n")) {
      if (line.startsWith("jvm_memory_used_bytes{area=\"heap\"")) {
        heap += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      } else if (line.startsWith("jvm_threads_live_threads ")) {
        liveThreads = (int) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    jcmd(pid, "GC.run");
    jcmd(pid, "GC.run"); // the second collects what the first's finalization let go
    long used = 0;
    Matcher m = HEAP_USED.matcher(jcmd(pid, "GC.heap_info"));
    while (m.find()) {
      used += Long.parseLong(m.group(1)) * 1024;
    }
    return new Reading(
        used, heap, liveThreads, (int) status(pid, "Threads:"), status(pid, "VmRSS:"));
  }

  static String jcmd(long pid, String command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("jcmd", Long.toString(pid), command).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("jcmd " + pid + " " + command + ": " + out);
    }
    return out;
  }

  /** A number from {@code /proc/<pid>/status} (KiB for memory). */
  private static long status(long pid, String key) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith(key)) {
        return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
      }
    }
    return -1;
  }
}

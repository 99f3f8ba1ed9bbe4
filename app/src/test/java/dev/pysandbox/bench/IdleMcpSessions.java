package dev.pysandbox.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
  private static final Pattern HISTOGRAM_LINE =
      Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)", Pattern.MULTILINE);

  private IdleMcpSessions() {}

  private record Reading(
      long heapAfterGc,
      double metricsHeap,
      int metricsThreads,
      int threads,
      long rssKb,
      Map<String, long[]> histogram) {}

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
    perSessionObjects(before.histogram(), after.histogram(), sessions);
    Benchmark.row("opening an MCP session (initialize + initialized, raw HTTP)", opening);
    System.out.printf("%d of %d idle sessions answered a ping afterwards%n", answering, sessions);
  }

  /**
   * The heap after GC moves by a few MB with what earlier loads left behind (buffers, connections
   * that time out), more than 1,000 sessions weigh; the class histogram's classes that grew by at
   * least one object per session are the sessions' own, with little of that noise.
   */
  private static void perSessionObjects(
      Map<String, long[]> before, Map<String, long[]> after, int sessions) {
    List<Map.Entry<String, long[]>> grown = new ArrayList<>();
    long bytes = 0;
    long objects = 0;
    for (Map.Entry<String, long[]> e : after.entrySet()) {
      long[] was = before.getOrDefault(e.getKey(), new long[2]);
      long[] delta = {e.getValue()[0] - was[0], e.getValue()[1] - was[1]};
      if (delta[0] >= sessions) {
        grown.add(Map.entry(e.getKey(), delta));
        bytes += delta[1];
        objects += delta[0];
      }
    }
    grown.sort((a, b) -> Long.compare(b.getValue()[1], a.getValue()[1]));
    StringBuilder top = new StringBuilder();
    for (Map.Entry<String, long[]> e : grown.subList(0, Math.min(6, grown.size()))) {
      top.append(
          String.format(
              Locale.ROOT,
              "%s%s %.0f B",
              top.length() == 0 ? "" : ", ",
              e.getKey(),
              e.getValue()[1] / (double) sessions));
    }
    System.out.printf(
        Locale.ROOT,
        "%-22s %8.0f bytes in %.1f objects (classes that grew by one or more objects per session,"
            + " jcmd GC.class_histogram): %s%n",
        "per session, objects",
        bytes / (double) sessions,
        objects / (double) sessions,
        top);
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
    Map<String, long[]> histogram = new HashMap<>();
    Matcher h = HISTOGRAM_LINE.matcher(jcmd(pid, "GC.class_histogram"));
    while (h.find()) {
      histogram.merge(
          h.group(3),
          new long[] {Long.parseLong(h.group(1)), Long.parseLong(h.group(2))},
          (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
    }
    return new Reading(
        used, heap, liveThreads, (int) status(pid, "Threads:"), status(pid, "VmRSS:"), histogram);
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

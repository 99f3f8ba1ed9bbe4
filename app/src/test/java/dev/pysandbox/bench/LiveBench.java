package dev.pysandbox.bench;

import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Live runs' figures (part of {@link Benchmark}, {@code BENCH_ONLY=live}): how long a line the code
 * prints takes to reach a client that watches the run, and what watching costs a short run, each
 * next to the same call without events in the same run.
 *
 * <p>The code in the sandbox stamps each line with {@code time.monotonic_ns()} and the client
 * stamps its arrival with {@link System#nanoTime()}: both read CLOCK_MONOTONIC on Linux (bubblewrap
 * makes no time namespace), which is checked first by a run printing the clock between two readings
 * of the caller's. In-process through a {@link RunListener}, then over a real {@code serve --http}
 * process with {@code java.net.http} (NDJSON and SSE) and the MCP SDK's client (progress, which is
 * once a second by design: its interval and the age of the line it carries).
 */
final class LiveBench {
  static final int LINES = 1000;
  static final int WARMUP_LINES = 1000;
  static final long GAP_NANOS = 2_000_000;
  static final int WARMUP_RUNS = 100;
  static final String CLOCK = "import time\nprint(time.monotonic_ns())";

  private LiveBench() {}

  static void run(Path launcher, Path dataDir, int warmCalls) throws Exception {
    System.out.printf(
        "live runs: %d lines printed %d ms apart; warm print(1) %d runs each way, interleaved;"
            + " load average %s%n",
        LINES, GAP_NANOS / 1_000_000, warmCalls, loadAverage());
    inProcess(dataDir.resolve("live-in-process"), warmCalls);
    LiveHttpBench.run(launcher, dataDir.resolve("live-http"), warmCalls);
    System.out.printf("load average at the end %s%n", loadAverage());
  }

  /** Code printing {@code lines} lines {@code L <i> <monotonic ns>}, one every 2 ms. */
  static String printer(int lines) {
    return "import time\n"
        + "t0 = time.monotonic_ns()\n"
        + "for i in range("
        + lines
        + "):\n"
        + "    d = t0 + i * "
        + GAP_NANOS
        + " - time.monotonic_ns()\n"
        + "    if d > 0:\n"
        + "        time.sleep(d / 1e9)\n"
        + "    print(f'L {i} {time.monotonic_ns()}')\n";
  }

  // -- in-process ---------------------------------------------------------------------------------

  private static void inProcess(Path dir, int calls) throws Exception {
    Files.createDirectories(dir);
    try (SandboxService service = TestServices.start(dir, Map.of())) {
      String session = service.createSession(null, null).sessionId();
      checkClock("in-process", () -> succeeded(service.run(request(CLOCK, session))).stdout());
      listened(service, session, WARMUP_LINES);
      Benchmark.row(
          "print -> RunListener.event, in-process (" + LINES + " lines)",
          listened(service, session, LINES).ms);

      ExecutionRequest print1 = request("print(1)", session);
      List<Double> plain = new ArrayList<>();
      List<Double> toReturn = new ArrayList<>();
      List<Double> toDone = new ArrayList<>();
      for (int i = 0; i < WARMUP_RUNS + calls; i++) {
        boolean keep = i >= WARMUP_RUNS;
        for (int turn = 0; turn < 2; turn++) {
          long t0 = System.nanoTime();
          if ((i + turn) % 2 == 0) {
            succeeded(service.run(print1));
            add(keep, plain, System.nanoTime() - t0);
          } else {
            Listener listener = new Listener(null);
            succeeded(service.run(print1, listener));
            add(keep, toReturn, System.nanoTime() - t0);
            add(keep, toDone, listener.done.get(10, TimeUnit.SECONDS) - t0);
          }
        }
      }
      Benchmark.row("baseline: warm session print(1), no events (" + calls + " runs)", plain);
      Benchmark.row("  same with a RunListener that wants events, to return", toReturn);
      cost(toReturn, plain);
      Benchmark.row("  same, to its done event", toDone);
      cost(toDone, plain);
    }
  }

  private static Arrivals listened(SandboxService service, String session, int lines)
      throws Exception {
    Listener listener = new Listener(new Arrivals());
    succeeded(service.run(request(printer(lines), session), listener));
    listener.done.get(30, TimeUnit.SECONDS);
    return listener.arrivals.expect(lines);
  }

  /** Takes every event; notes the lines' arrival and when {@code done} came. */
  private static final class Listener implements RunListener {
    final CompletableFuture<Long> done = new CompletableFuture<>();
    final Arrivals arrivals;

    Listener(Arrivals arrivals) {
      this.arrivals = arrivals;
    }

    @Override
    public void started(String runId) {}

    @Override
    public boolean wantsEvents() {
      return true;
    }

    @Override
    public void event(RunEvent event) {
      long at = System.nanoTime();
      if (event instanceof RunEvent.Stdout out && arrivals != null) {
        arrivals.take(out.text(), at);
      } else if (event.isDone()) {
        done.complete(at);
      }
    }
  }

  // -- shared -------------------------------------------------------------------------------------

  /**
   * The sandbox's {@code time.monotonic_ns()} must fall between the caller's {@link
   * System#nanoTime()} before and after the run, or the latencies measured here mean nothing.
   */
  static void checkClock(String where, Supplier<String> stdout) {
    long before = System.nanoTime();
    String out = stdout.get();
    long after = System.nanoTime();
    long sandbox = Long.parseLong(out.strip());
    if (sandbox < before || sandbox > after) {
      throw new IllegalStateException(
          String.format(
              Locale.ROOT,
              "%s: the sandbox's time.monotonic_ns() %d is not between System.nanoTime() %d and %d:"
                  + " not one clock, latencies cannot be measured this way",
              where,
              sandbox,
              before,
              after));
    }
    System.out.printf(
        Locale.ROOT,
        "clock (%s): the sandbox's time.monotonic_ns() fell %.3f ms after System.nanoTime()"
            + " before the run and %.3f ms before the one after: one clock%n",
        where,
        (sandbox - before) / 1e6,
        (after - sandbox) / 1e6);
  }

  /** The printer's lines as they reach a client: each line's age when it arrived, in ms. */
  static final class Arrivals {
    private final StringBuilder partial = new StringBuilder();
    final List<Double> ms = new ArrayList<>();

    /**
     * A chunk of stdout (one read's worth: parts of lines, or several) that arrived at {@code at}.
     */
    synchronized void take(String text, long at) {
      partial.append(text);
      int nl;
      while ((nl = partial.indexOf("\n")) >= 0) {
        String line = partial.substring(0, nl);
        partial.delete(0, nl + 1);
        if (line.startsWith("L ")) {
          ms.add((at - printedAt(line)) / 1e6);
        }
      }
    }

    synchronized Arrivals expect(int lines) {
      if (ms.size() != lines) {
        throw new IllegalStateException(ms.size() + " lines arrived of " + lines);
      }
      return this;
    }
  }

  static long printedAt(String line) {
    return Long.parseLong(line.substring(line.lastIndexOf(' ') + 1).strip());
  }

  static void cost(List<Double> with, List<Double> without) {
    List<Double> a = new ArrayList<>(with);
    List<Double> b = new ArrayList<>(without);
    Collections.sort(a);
    Collections.sort(b);
    System.out.printf(
        Locale.ROOT,
        "    streaming costs %+.3f ms at p50, %+.3f ms at p99 (target: within 0.1 ms at p50)%n",
        Benchmark.pct(a, 50) - Benchmark.pct(b, 50),
        Benchmark.pct(a, 99) - Benchmark.pct(b, 99));
  }

  static void add(boolean keep, List<Double> to, long nanos) {
    if (keep) {
      to.add(nanos / 1e6);
    }
  }

  private static ExecutionRequest request(String code, String session) {
    return new ExecutionRequest(code, session, null, 60);
  }

  private static RunRecord succeeded(RunRecord r) {
    if (r.status() != RunStatus.SUCCEEDED) {
      throw new IllegalStateException("run " + r.runId() + ": " + r.status() + " " + r.message());
    }
    return r;
  }

  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "unknown";
    }
  }
}

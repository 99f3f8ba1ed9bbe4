package dev.pysandbox.bench;

import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.packages.SimpleIndex;
import dev.pysandbox.packages.TinyWheels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What packages cost ({@code BENCH_ONLY=packages}), against a PEP 503 index the bench serves on
 * loopback: the first run with a new one-package environment (the build: venv + pip in a sandbox
 * through the egress proxy) next to the same pip install on the host outside any sandbox (the
 * baseline); a one-shot run in a cached environment next to one without packages; and a warm {@code
 * print(1)} in a session with packages next to one without (alternating blocks).
 */
final class PackagesBench {
  private static final int BUILDS = 5;

  private PackagesBench() {}

  static void run(Path dataDir, int calls, int warmCalls) throws Exception {
    Path wheels = Files.createDirectories(dataDir.resolve("wheels"));
    TinyWheels.build(wheels, "tinypkg", "1.0");
    for (int i = 0; i < BUILDS + 1; i++) {
      TinyWheels.build(wheels, "benchpkg" + i, "1.0");
    }
    try (SimpleIndex index = SimpleIndex.serve(wheels);
        DefaultSandboxService s =
            TestServices.start(
                dataDir.resolve("packages"),
                Map.of(
                    "pool_size",
                    "1",
                    "index_url",
                    index.url().toString(),
                    "network_allow_private",
                    "true"))) {
      System.out.printf("%n== packages: environments built and used ==%n");
      // Baseline: the same install on the host, no sandbox, no proxy.
      long[] host = new long[BUILDS];
      for (int i = 0; i < BUILDS; i++) {
        Path venv = dataDir.resolve("host-venv-" + i);
        long t = System.nanoTime();
        exec(
            "/usr/bin/python3",
            "-m",
            "venv",
            "--system-site-packages",
            "--without-pip",
            venv.toString());
        exec(
            venv.resolve("bin/python").toString(),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--index-url",
            index.url().toString(),
            "benchpkg" + BUILDS + "==1.0");
        host[i] = System.nanoTime() - t;
      }
      Arrays.sort(host);
      long[] builds = new long[BUILDS];
      for (int i = 0; i < BUILDS; i++) {
        long t = System.nanoTime();
        RunRecord r = oneShot(s, List.of("benchpkg" + i + "==1.0"));
        builds[i] = System.nanoTime() - t;
        require(r);
      }
      Arrays.sort(builds);
      System.out.printf(
          "host baseline: python3 -m venv + pip install (no sandbox): min %.0f  median %.0f  max %.0f ms%n",
          host[0] / 1e6, host[BUILDS / 2] / 1e6, host[BUILDS - 1] / 1e6);
      System.out.printf(
          "first run with a new environment (build + run):        min %.0f  median %.0f  max %.0f ms%n",
          builds[0] / 1e6, builds[BUILDS / 2] / 1e6, builds[BUILDS - 1] / 1e6);

      // One-shot runs: a cached environment (no pooled sandbox has it) vs none (pooled).
      require(oneShot(s, List.of("tinypkg==1.0")));
      List<Long> withEnv = new ArrayList<>();
      List<Long> without = new ArrayList<>();
      int blocks = 5;
      int per = Math.max(1, calls / blocks);
      for (int b = 0; b < blocks; b++) {
        for (int i = 0; i < per; i++) {
          without.add(timed(() -> oneShot(s, List.of())));
        }
        for (int i = 0; i < per; i++) {
          withEnv.add(timed(() -> oneShot(s, List.of("tinypkg==1.0"))));
        }
      }
      report("one-shot print(1), no packages, back to back", without, null);
      report("one-shot print(1), cached environment, back to back", withEnv, without);
      // With a pause before each call (not timed), as an agent calls: the pool and the spare
      // have had time to start the next sandbox.
      List<Long> pausedEnv = new ArrayList<>();
      List<Long> pausedNone = new ArrayList<>();
      int paused = Math.max(1, Math.min(per, 20));
      for (int b = 0; b < blocks; b++) {
        for (int i = 0; i < paused; i++) {
          Thread.sleep(300);
          pausedNone.add(timed(() -> oneShot(s, List.of())));
        }
        for (int i = 0; i < paused; i++) {
          Thread.sleep(300);
          pausedEnv.add(timed(() -> oneShot(s, List.of("tinypkg==1.0"))));
        }
      }
      report("one-shot print(1), no packages, 300 ms apart", pausedNone, null);
      report("one-shot print(1), cached environment, 300 ms apart", pausedEnv, pausedNone);

      // Warm runs in sessions.
      s.createSession("bench_pk", null, LimitRequest.DEFAULTS, null, List.of("tinypkg==1.0"));
      s.createSession("bench_plain", null, LimitRequest.DEFAULTS, null, List.of());
      for (int i = 0; i < 200; i++) {
        warm(s, "bench_pk");
        warm(s, "bench_plain");
      }
      List<Long> wPk = new ArrayList<>();
      List<Long> wPlain = new ArrayList<>();
      int wPer = Math.max(1, warmCalls / 10);
      for (int b = 0; b < 10; b++) {
        for (int i = 0; i < wPer; i++) {
          wPlain.add(warm(s, "bench_plain"));
        }
        for (int i = 0; i < wPer; i++) {
          wPk.add(warm(s, "bench_pk"));
        }
      }
      report("warm print(1) in a session, no packages", wPlain, null);
      report("warm print(1) in a session with an environment", wPk, wPlain);
      s.closeSession("bench_pk");
      s.closeSession("bench_plain");
    }
  }

  private interface Call {
    RunRecord call();
  }

  private static long timed(Call c) {
    long t = System.nanoTime();
    require(c.call());
    return System.nanoTime() - t;
  }

  private static long warm(DefaultSandboxService s, String session) {
    return timed(() -> s.run(new ExecutionRequest("print(1)", session, null, null)));
  }

  private static RunRecord oneShot(DefaultSandboxService s, List<String> packages) {
    return s.run(new ExecutionRequest("print(1)", null, null, 120, null, null, false, packages));
  }

  private static void require(RunRecord r) {
    if (r.status() != RunStatus.SUCCEEDED) {
      throw new IllegalStateException(r.status() + ": " + r.message() + " " + r.stderr());
    }
  }

  private static void report(String what, List<Long> values, List<Long> baseline) {
    long[] v = values.stream().mapToLong(Long::longValue).sorted().toArray();
    String delta = "";
    if (baseline != null) {
      long[] b = baseline.stream().mapToLong(Long::longValue).sorted().toArray();
      delta = String.format("  (p50 %+.3f ms)", (p(v, 50) - p(b, 50)) / 1e6);
    }
    System.out.printf(
        "%-56s p50 %.3f ms  p99 %.3f ms%s%n", what + ":", p(v, 50) / 1e6, p(v, 99) / 1e6, delta);
  }

  private static long p(long[] sorted, int percentile) {
    return sorted[Math.min(sorted.length - 1, sorted.length * percentile / 100)];
  }

  private static void exec(String... argv) throws Exception {
    Process p =
        new ProcessBuilder(argv)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException("failed: " + String.join(" ", argv));
    }
  }
}

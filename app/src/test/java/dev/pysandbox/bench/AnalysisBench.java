package dev.pysandbox.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.ValidationReport;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * What the code analysis costs ({@code BENCH_ONLY=analysis}), in-process: {@code validate_code} on
 * 100 lines of ordinary data-science code (the corpus's clean script) and on 1,000 (the same ten
 * times), next to two baselines measured in the same run: the same round trip with {@code pass}
 * (what the sandbox hop costs without analysis work) and a warm {@code print(1)} run in a session.
 * Each is measured in blocks that take turns, so that drift hits all alike; the analyser's own time
 * ({@code analysis_ms}: request written to answer read) is printed beside the caller's. Then what
 * the first call pays (the analysis sandbox's start) in a fresh server.
 */
final class AnalysisBench {
  private AnalysisBench() {}

  static void run(Path dataDir, int warmCalls) throws Exception {
    String script = script();
    String hundred = script;
    String thousand = script.repeat(10);
    System.out.printf(
        "%n== code analysis: validate_code, %d calls each (%d and %d lines) ==%n",
        warmCalls, hundred.split("\n").length, thousand.split("\n").length);
    try (DefaultSandboxService s = start(dataDir.resolve("analysis"))) {
      String session = s.createSession(null, null).sessionId();
      List<Case> cases =
          List.of(
              new Case(
                  "validate_code(\"pass\") (baseline: the round trip)",
                  warmCalls,
                  c -> validate(s, "pass", c)),
              new Case(
                  "print(1) in a session (baseline: a warm run)",
                  warmCalls,
                  c -> printOne(s, session)),
              new Case("validate_code, 100 lines", warmCalls, c -> validate(s, hundred, c)),
              new Case("validate_code, 1000 lines", warmCalls, c -> validate(s, thousand, c)),
              new Case("run_python dry_run, 100 lines", warmCalls, c -> dryRun(s, hundred)));
      for (int i = 0; i < 100; i++) {
        cases.forEach(c -> c.call.applyAsLong(null));
      }
      int blocks = 10;
      int perBlock = Math.max(1, warmCalls / blocks);
      for (int b = 0; b < blocks; b++) {
        for (Case c : cases) {
          for (int i = 0; i < perBlock; i++) {
            c.measure();
          }
        }
      }
      cases.forEach(Case::print);
    }
    // The first call of a server pays for the analysis sandbox's start.
    long[] first = new long[5];
    for (int k = 0; k < first.length; k++) {
      try (DefaultSandboxService s = start(dataDir.resolve("analysis-first-" + k))) {
        long t = System.nanoTime();
        s.validateCode("print(1)");
        first[k] = System.nanoTime() - t;
      }
    }
    Arrays.sort(first);
    System.out.printf(
        "%-52s p50 %7.1f ms  max %7.1f ms%n",
        "first validate_code of a server (" + first.length + " servers)",
        p(first, 50) / 1e6,
        first[first.length - 1] / 1e6);
  }

  private static String script() throws Exception {
    try (InputStream in =
        AnalysisBench.class.getResourceAsStream("/dev/pysandbox/core/analysis-corpus.json")) {
      for (JsonNode c : Json.mapper().readTree(in).path("clean")) {
        if (c.path("name").asText().equals("data_science_script")) {
          return c.path("code").asText();
        }
      }
    }
    throw new IllegalStateException("no data_science_script in the corpus");
  }

  private static DefaultSandboxService start(Path dir) throws Exception {
    Files.createDirectories(dir);
    return TestServices.start(dir, Map.of("pool_size", "1"));
  }

  /** One measured call: how long the caller waited, and the analysis's own time if it has one. */
  private static final class Case {
    final String name;
    final ToLongFunction<Case> call;
    final long[] took;
    final double[] own;
    int n;
    int owned;

    Case(String name, int calls, ToLongFunction<Case> call) {
      this.name = name;
      this.call = call;
      this.took = new long[calls];
      this.own = new double[calls];
    }

    void measure() {
      if (n < took.length) {
        took[n++] = call.applyAsLong(this);
      }
    }

    void own(double ms) {
      if (owned < own.length) {
        own[owned++] = ms;
      }
    }

    void print() {
      long[] t = Arrays.copyOf(took, n);
      Arrays.sort(t);
      String analysis = "";
      if (owned > 0) {
        double[] a = Arrays.copyOf(own, owned);
        Arrays.sort(a);
        analysis = String.format("  (analysis_ms p50 %.3f)", a[a.length / 2]);
      }
      System.out.printf(
          "%-52s p50 %7.3f ms  p99 %7.3f ms%s%n", name, p(t, 50) / 1e6, p(t, 99) / 1e6, analysis);
    }
  }

  /** {@code measured} is null while warming up: its analysis time is not kept. */
  private static long validate(DefaultSandboxService s, String code, Case measured) {
    long t = System.nanoTime();
    ValidationReport r = s.validateCode(code);
    long took = System.nanoTime() - t;
    if (!r.valid()) {
      throw new IllegalStateException("not valid: " + r.syntaxErrors());
    }
    if (measured != null) {
      measured.own(r.analysisMs());
    }
    return took;
  }

  private static long dryRun(DefaultSandboxService s, String code) {
    long t = System.nanoTime();
    RunRecord r =
        s.run(
            new ExecutionRequest(code, null, null, null, null, null, true, List.of()),
            RunListener.NONE);
    long took = System.nanoTime() - t;
    if (r.status() != RunStatus.DRY_RUN) {
      throw new IllegalStateException(r.message());
    }
    return took;
  }

  private static long printOne(DefaultSandboxService s, String session) {
    long t = System.nanoTime();
    RunRecord r = s.run(new ExecutionRequest("print(1)", session, null, null));
    long took = System.nanoTime() - t;
    if (r.status() != RunStatus.SUCCEEDED) {
      throw new IllegalStateException(r.message());
    }
    return took;
  }

  private static long p(long[] sorted, int percentile) {
    return sorted[Math.min(sorted.length - 1, sorted.length * percentile / 100)];
  }
}

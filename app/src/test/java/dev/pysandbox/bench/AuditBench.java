package dev.pysandbox.bench;

import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.notebook.NotebookFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What the audit trail costs a warm run ({@code BENCH_ONLY=audit}): in-process {@code print(1)} in
 * a session with every run's notebooks written in the background ({@code notebooks=true}, the
 * default) next to the same with them off (the baseline; sealing into the hash chain happens in
 * both), in alternating blocks so that drift hits both alike; then what the background work itself
 * takes per run (writing both notebooks, sealing), and how long {@code runs verify} takes.
 */
final class AuditBench {
  private AuditBench() {}

  static void run(Path dataDir, int warmCalls) throws Exception {
    System.out.printf("%n== audit trail: warm print(1) in a session, %d runs each ==%n", warmCalls);
    try (DefaultSandboxService on = start(dataDir.resolve("audit-on"), true);
        DefaultSandboxService off = start(dataDir.resolve("audit-off"), false)) {
      String sOn = on.createSession(null, null).sessionId();
      String sOff = off.createSession(null, null).sessionId();
      for (int i = 0; i < 200; i++) {
        once(on, sOn);
        once(off, sOff);
      }
      int blocks = 10;
      int perBlock = Math.max(1, warmCalls / blocks);
      List<Long> withNotebooks = new ArrayList<>();
      List<Long> without = new ArrayList<>();
      for (int b = 0; b < blocks; b++) {
        for (int i = 0; i < perBlock; i++) {
          without.add(once(off, sOff));
        }
        for (int i = 0; i < perBlock; i++) {
          withNotebooks.add(once(on, sOn));
        }
      }
      long[] a = sorted(without);
      long[] n = sorted(withNotebooks);
      System.out.printf(
          "notebooks off (baseline): p50 %.3f ms  p99 %.3f ms%n", p(a, 50) / 1e6, p(a, 99) / 1e6);
      System.out.printf(
          "notebooks on (default):   p50 %.3f ms  p99 %.3f ms  (p50 %+.3f ms)%n",
          p(n, 50) / 1e6, p(n, 99) / 1e6, (p(n, 50) - p(a, 50)) / 1e6);

      // The background work itself, per run, on the bench's own thread.
      RunRecord sample =
          on.getRun(on.run(new ExecutionRequest("print(1)", sOn, null, null)).runId(), true);
      Path scratch = dataDir.resolve("notebook-scratch");
      long[] write = new long[200];
      for (int i = 0; i < write.length; i++) {
        long t = System.nanoTime();
        NotebookFiles.write(scratch, sample);
        write[i] = System.nanoTime() - t;
      }
      Arrays.sort(write);
      System.out.printf(
          "writing one run's two notebooks (background): p50 %.3f ms  p99 %.3f ms%n",
          p(write, 50) / 1e6, p(write, 99) / 1e6);
      long t = System.nanoTime();
      var report = on.verifyRecords();
      System.out.printf(
          "runs verify over %d links (%d kept files): %.1f ms, ok=%s%n",
          report.links(), report.files(), (System.nanoTime() - t) / 1e6, report.ok());
    }
  }

  private static DefaultSandboxService start(Path dir, boolean notebooks) throws Exception {
    Files.createDirectories(dir);
    return TestServices.start(
        dir, Map.of("pool_size", "1", "notebooks", String.valueOf(notebooks)));
  }

  private static long once(DefaultSandboxService s, String session) {
    long t = System.nanoTime();
    RunRecord r = s.run(new ExecutionRequest("print(1)", session, null, null));
    long took = System.nanoTime() - t;
    if (r.status() != RunStatus.SUCCEEDED) {
      throw new IllegalStateException(r.message());
    }
    return took;
  }

  private static long[] sorted(List<Long> values) {
    long[] out = values.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(out);
    return out;
  }

  private static long p(long[] sorted, int percentile) {
    return sorted[Math.min(sorted.length - 1, sorted.length * percentile / 100)];
  }
}

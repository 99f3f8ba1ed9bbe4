package dev.pysandbox.bench;

import dev.pysandbox.TestServices;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.backend.bwrap.BwrapBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.worker.WorkerHub;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A plain harness (not a test): what one sandbox start costs, {@code BwrapBackend.start} to ready,
 * one start at a time, each sandbox killed and released before the next. Several configurations
 * ({@code -Dbench.set="k=v,k=v;k=v"}, each its own backend and data directory) take turns start by
 * start, so that a machine busy with other work slows them alike; it prints each one's p50/p90 and
 * the p50 of its difference to the first, start by start. {@code -Dbench.starts} (100) per
 * configuration, after 10 unmeasured. Run with {@code BENCH_ONLY=sandbox-start scripts/bench.sh}.
 */
public final class StartCost {
  private StartCost() {}

  public static void main(String[] args) throws Exception {
    int starts = Integer.getInteger("bench.starts", 100);
    List<Map<String, String>> configs = new ArrayList<>();
    for (String set : System.getProperty("bench.set", "").split(";", -1)) {
      Map<String, String> settings = new LinkedHashMap<>();
      for (String kv : set.split(",")) {
        if (kv.contains("=")) {
          settings.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
      }
      configs.add(settings);
    }
    ExecutorService executor = Executors.newCachedThreadPool();
    List<WorkerHub> hubs = new ArrayList<>();
    List<BwrapBackend> backends = new ArrayList<>();
    List<SandboxSpec> specs = new ArrayList<>();
    List<Path> dataDirs = new ArrayList<>();
    try {
      for (Map<String, String> settings : configs) {
        Path dataDir = Files.createTempDirectory("pysandbox-startcost");
        dataDirs.add(dataDir);
        PysandboxConfig config = TestServices.config(dataDir, settings);
        DataLayout layout = new DataLayout(config.dataDir());
        WorkerHub hub = WorkerHub.open(layout.runtimeDir().resolve("bench.sock"));
        hubs.add(hub);
        BwrapBackend backend =
            new BwrapBackend(config, layout, hub, "0bench0" + backends.size(), executor);
        backends.add(backend);
        if (backend.unavailableReason().isPresent()) {
          throw new IllegalStateException(backend.unavailableReason().get());
        }
        specs.add(
            new SandboxSpec(List.of(), 1 << 20, config.defaultLimits(), config.outputMaxBytes()));
      }
      List<List<Double>> ms = new ArrayList<>();
      configs.forEach(c -> ms.add(new ArrayList<>()));
      for (int i = 0; i < starts + 10; i++) {
        for (int c = 0; c < configs.size(); c++) {
          double elapsed = startOnce(backends.get(c), specs.get(c));
          if (i >= 10) {
            ms.get(c).add(elapsed);
          }
        }
      }
      for (int c = 0; c < configs.size(); c++) {
        List<Double> diffs = new ArrayList<>();
        for (int i = 0; i < ms.get(c).size(); i++) {
          diffs.add(ms.get(c).get(i) - ms.get(0).get(i));
        }
        List<Double> sorted = new ArrayList<>(ms.get(c));
        Collections.sort(sorted);
        Collections.sort(diffs);
        System.out.printf(
            "BwrapBackend.start -> ready %s: %d starts, p50 %.2f ms, p90 %.2f ms;"
                + " start by start minus the first: p50 %+.2f ms%n",
            configs.get(c),
            sorted.size(),
            sorted.get(sorted.size() / 2),
            sorted.get(sorted.size() * 9 / 10),
            diffs.get(diffs.size() / 2));
      }
    } finally {
      backends.forEach(BwrapBackend::close);
      hubs.forEach(WorkerHub::close);
      executor.shutdownNow();
      for (Path dir : dataDirs) {
        try (var all = Files.walk(dir)) {
          all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
  }

  private static double startOnce(BwrapBackend backend, SandboxSpec spec) throws Exception {
    long t0 = System.nanoTime();
    Sandbox s = backend.start(spec).get(30, TimeUnit.SECONDS);
    double elapsed = (System.nanoTime() - t0) / 1e6;
    s.kill("bench").get(10, TimeUnit.SECONDS);
    s.exited().get(10, TimeUnit.SECONDS);
    s.releaseWorkspace();
    Files.deleteIfExists(s.workspace());
    return elapsed;
  }
}

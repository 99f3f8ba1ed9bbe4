package dev.pysandbox.bench;

import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.core.DefaultSandboxService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

/**
 * What a warm session's {@code print(1)} costs in-process, with 20 small files in its workspace (so
 * that the after-run snapshot has something to look at). Prints p50 and p99; not a test.
 *
 * <pre>
 * mvn -q test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp target/classes:target/test-classes:$(cat target/cp.txt) \
 *     dev.pysandbox.bench.SessionExecBench [runs=500] [rounds=3]
 * </pre>
 */
public final class SessionExecBench {
  private SessionExecBench() {}

  public static void main(String[] args) throws Exception {
    int runs = args.length > 0 ? Integer.parseInt(args[0]) : 500;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    Path dataDir = Files.createTempDirectory("pysandbox-bench-");
    DefaultSandboxService service = TestServices.start(dataDir, Map.of("pool_size", "1"));
    try {
      String id = service.createSession(null, null).sessionId();
      RunRecord setup =
          service.run(
              new ExecutionRequest(
                  "import os\nos.makedirs('sub', exist_ok=True)\n"
                      + "for i in range(20):\n"
                      + "    open(('sub/' if i % 2 else '') + f'f{i}.txt', 'w').write('x' * 100 * i)",
                  id, null, null));
      if (setup.status() != RunStatus.SUCCEEDED) {
        throw new IllegalStateException(setup.message());
      }
      for (int i = 0; i < 100; i++) {
        service.run(new ExecutionRequest("print(1)", id, null, null));
      }
      for (int round = 1; round <= rounds; round++) {
        long[] nanos = new long[runs];
        for (int i = 0; i < runs; i++) {
          long t = System.nanoTime();
          RunRecord r = service.run(new ExecutionRequest("print(1)", id, null, null));
          nanos[i] = System.nanoTime() - t;
          if (r.status() != RunStatus.SUCCEEDED) {
            throw new IllegalStateException(r.message());
          }
        }
        Arrays.sort(nanos);
        System.out.printf(
            "round %d: session print(1), 20 files, %d runs: p50 %.3f ms, p99 %.3f ms%n",
            round, runs, nanos[runs / 2] / 1e6, nanos[runs * 99 / 100] / 1e6);
      }
      service.closeSession(id);
    } finally {
      service.close();
    }
  }
}

package dev.pysandbox.bench;

import dev.pysandbox.store.ApiKeyFormat;
import dev.pysandbox.store.jdbc.JdbcApiKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * What {@code ApiKeys.authenticate} costs per request, in-process on a real SQLite file: a key
 * whose answer is kept (the usual request), a key read from the store (the first request after the
 * answer expired), a well-formed unknown key and a malformed one. Prints p50 and p99; not a test.
 *
 * <pre>
 * mvn -q test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp target/classes:target/test-classes:$(cat target/cp.txt) \
 *     dev.pysandbox.bench.ApiKeyAuthBench [calls=200000]
 * </pre>
 */
public final class ApiKeyAuthBench {
  private ApiKeyAuthBench() {}

  public static void main(String[] args) throws Exception {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    Path dir = Files.createTempDirectory("pysandbox-bench-keys-");
    try (JdbcApiKeys keys = JdbcApiKeys.openSqlite(dir.resolve("pysandbox.db"))) {
      for (int i = 0; i < 1000; i++) {
        keys.create("t" + (i % 10), null);
      }
      String key = keys.create("acme", "bench").key();
      report("kept answer", calls, () -> keys.authenticate(key));
      // Each call a different well-formed key: never kept, so each reads the store.
      String[] fresh = new String[calls / 10];
      Arrays.setAll(fresh, i -> ApiKeyFormat.newKey());
      int[] next = {0};
      report("unknown key (store read)", fresh.length, () -> keys.authenticate(fresh[next[0]++]));
      report("malformed", calls, () -> keys.authenticate("Bearer nonsense"));
    }
  }

  private static void report(String what, int calls, Supplier<?> call) {
    long[] nanos = new long[calls];
    for (int i = 0; i < calls; i++) {
      long start = System.nanoTime();
      call.get();
      nanos[i] = System.nanoTime() - start;
    }
    // The first half warms the JIT up; figures are from the second.
    long[] measured = Arrays.copyOfRange(nanos, calls / 2, calls);
    Arrays.sort(measured);
    System.out.printf(
        "%-26s p50 %6.2f µs   p99 %6.2f µs   (%d calls)%n",
        what,
        measured[measured.length / 2] / 1000.0,
        measured[(int) (measured.length * 0.99)] / 1000.0,
        measured.length);
  }
}

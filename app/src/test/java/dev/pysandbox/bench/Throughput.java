package dev.pysandbox.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Calls per second from concurrent clients, each with a thread, a connection and a session of its
 * own, one call at a time, as fast as they can: for a while, or until so many calls have been made
 * in all. With each figure, where the CPU went in the meantime ({@link CpuSample}).
 */
final class Throughput {
  /** One call of one client; it throws when the answer is wrong. */
  @FunctionalInterface
  interface Call {
    void call() throws Exception;
  }

  /**
   * What one load measured.
   *
   * @param ms each call's latency, in milliseconds
   * @param cpu where the CPU went, one line
   */
  record Result(long calls, double seconds, List<Double> ms, String cpu) {}

  private Throughput() {}

  /**
   * @param maxCalls stop after this many calls in all; 0 for no limit but the duration
   * @param serverPid the server's process (this JVM's pid when the server runs in-process)
   */
  static Result run(List<Call> clients, Duration duration, long maxCalls, long serverPid)
      throws Exception {
    boolean inProcess = serverPid == ProcessHandle.current().pid();
    ExecutorService threads = Executors.newFixedThreadPool(clients.size());
    try {
      CountDownLatch go = new CountDownLatch(1);
      AtomicLong budget = new AtomicLong(maxCalls > 0 ? maxCalls : Long.MAX_VALUE);
      long[] deadline = new long[1];
      List<Future<List<Double>>> done = new ArrayList<>();
      for (Call client : clients) {
        done.add(
            threads.submit(
                () -> {
                  go.await();
                  List<Double> ms = new ArrayList<>();
                  while (System.nanoTime() < deadline[0] && budget.decrementAndGet() >= 0) {
                    long t0 = System.nanoTime();
                    client.call();
                    ms.add((System.nanoTime() - t0) / 1e6);
                  }
                  return ms;
                }));
      }
      CpuSample before = CpuSample.take(serverPid);
      long t0 = System.nanoTime();
      deadline[0] = t0 + duration.toNanos();
      go.countDown();
      List<Double> all = new ArrayList<>();
      for (Future<List<Double>> f : done) {
        all.addAll(f.get());
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      CpuSample after = CpuSample.take(serverPid);
      return new Result(
          all.size(), seconds, all, CpuSample.describe(before, after, all.size(), inProcess));
    } finally {
      threads.shutdownNow();
    }
  }

  static void print(String what, Result r) {
    List<Double> s = new ArrayList<>(r.ms());
    Collections.sort(s);
    System.out.printf(
        Locale.ROOT,
        "%-66s %6.0f calls/s   p50 %6.2f ms   p99 %7.2f ms   (%d calls in %.1f s)%n%s%n",
        what,
        r.calls() / r.seconds(),
        Benchmark.pct(s, 50),
        Benchmark.pct(s, 99),
        r.calls(),
        r.seconds(),
        r.cpu());
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.backend.ProcessTable;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sandboxed code attacking the server through its own sockets: a flooded control socket, frames
 * beyond the JSON reader's limits, output between runs. Each attack runs inside a sandbox; the
 * server must stay fair to other sessions, bounded in memory and CPU, and say what happened.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class ProtocolAbuseTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;

  @BeforeAll
  static void start() {
    service = TestServices.start(dataDir, Map.of("pool_size", "2", "cancel_grace", "1"));
  }

  @AfterAll
  static void stop() {
    service.close();
  }

  private static RunRecord run(String session, String code, int timeoutSeconds) {
    return service.run(new ExecutionRequest(code, session, null, timeoutSeconds));
  }

  private static SessionInfo session(String id) {
    return service.listSessions().stream()
        .filter(i -> i.sessionId().equals(id))
        .findFirst()
        .orElseThrow();
  }

  private static String newSession() {
    return service.createSession(null, null).sessionId();
  }

  /** Python: the runner's control socket, the lowest socket fd above 63. */
  private static final String FIND_CTL =
      "import os\n"
          + "ctl = min(int(f) for f in os.listdir('/proc/self/fd') if int(f) >= 64"
          + " and os.readlink('/proc/self/fd/' + f).startswith('socket:'))\n";

  @Test
  void controlSocketFlood_endsTheFloodingSession_andNeverDelaysAnother() throws Exception {
    String a = newSession();
    String b = newSession();
    assertThat(run(b, "print(0)", 3).status()).isEqualTo(RunStatus.SUCCEEDED);
    // Growth over what the heap held before the flood: other tests' garbage in this JVM is not
    // the server buffering the flood.
    System.gc();
    Runtime heap = Runtime.getRuntime();
    long before = heap.totalMemory() - heap.freeMemory();
    AtomicLong peakHeap = new AtomicLong();
    ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    sampler.scheduleAtFixedRate(
        () -> peakHeap.accumulateAndGet(heap.totalMemory() - heap.freeMemory(), Math::max),
        0,
        20,
        TimeUnit.MILLISECONDS);
    // 63 MiB lines with an id that was never a request's, as fast as the socket takes them.
    CompletableFuture<RunRecord> flood =
        CompletableFuture.supplyAsync(
            () ->
                run(
                    a,
                    FIND_CTL
                        + "line = b'\\n{\"type\":\"done\",\"id\":\"r0000000000000000\","
                        + "\"status\":\"ok\",\"pad\":\"' + b'a' * (63 << 20) + b'\"}\\n'\n"
                        + "while True:\n"
                        + "    os.write(ctl, line)\n",
                    30));
    List<Long> latencies = new ArrayList<>();
    try {
      // B runs all along the flood (at most 20 s of it), and 5 times after it ended; each within
      // its own 3 s limit (how long each took is the benchmark's figure, not asserted here).
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      int afterFlood = 0;
      while (afterFlood < 5 && System.nanoTime() < until) {
        if (flood.isDone()) {
          afterFlood++;
        }
        long t = System.nanoTime();
        RunRecord r = run(b, "print(1)", 3);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t);
        latencies.add(ms);
        assertThat(r.status())
            .as("B's run %d after %d ms: %s", latencies.size(), ms, r.message())
            .isEqualTo(RunStatus.SUCCEEDED);
        assertThat(r.stdout()).isEqualTo("1\n");
      }
    } finally {
      sampler.shutdownNow();
      assertThat(sampler.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    RunRecord flooded = flood.get(40, TimeUnit.SECONDS);
    assertThat(flooded.status())
        .as(
            "%s (B's runs took %s ms; peak heap %d MiB)",
            flooded.message(), latencies, peakHeap.get() >> 20)
        .isEqualTo(RunStatus.FAILED);
    assertThat(flooded.killReason()).isEqualTo(KillReason.PROTOCOL_VIOLATION);
    assertThat(flooded.message()).contains("protocol").contains("MiB");
    assertThatThrownBy(() -> run(a, "print(2)", 3))
        .isInstanceOfSatisfying(
            PysandboxException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SESSION_DEAD))
        .hasMessageContaining("protocol_violation");
    assertThat(peakHeap.get() - before)
        .as("peak heap growth over the %d MiB before the flood (bytes)", before >> 20)
        .isLessThan(256L << 20);
    service.closeSession(a);
    service.closeSession(b);
  }

  @Test
  void controlSocketFloodBetweenRuns_killsTheSession_namingTheViolation() throws Exception {
    String s = newSession();
    RunRecord r =
        run(
            s,
            FIND_CTL
                + "import threading, time\n"
                + "def flood():\n"
                + "    time.sleep(0.3)\n"
                + "    while True:\n"
                + "        os.write(ctl, b'\\n' + b'x' * (1 << 20))\n"
                + "threading.Thread(target=flood, daemon=True).start()",
            10);
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    SessionInfo info =
        Await.until(
            "session " + s + " is dead", () -> session(s), i -> i.state() == SessionState.DEAD);
    assertThat(info.deadReason()).startsWith("protocol_violation:").contains("over 8 MiB");
    service.closeSession(s);
  }

  @Test
  void outputsBeyondTheJsonReadersLimits_failTheRunAtOnce_namingTheLimit() {
    String s = newSession();
    // At once: FAILED with the limit's name, not TIMED_OUT at the run's 30 s.
    RunRecord longString = run(s, "__outputs__ = {'x': 'a' * 21_000_000}", 30);
    assertThat(longString.status()).as(longString.message()).isEqualTo(RunStatus.FAILED);
    // The runner's own cap on __outputs__ (outputs_max_mb) refuses it before the reader's limit.
    assertThat(longString.message()).contains("outputs_max_mb");

    RunRecord longNumber = run(s, "__outputs__ = {'n': 10 ** 1000}", 30);
    assertThat(longNumber.status()).as(longNumber.message()).isEqualTo(RunStatus.FAILED);
    assertThat(longNumber.message()).contains("1000");

    // The runner answered; only its answer was unreadable: the session goes on.
    assertThat(run(s, "print('after')", 10).stdout()).isEqualTo("after\n");
    service.closeSession(s);
  }

  @Test
  void contextBeyondTheJsonReadersLimits_failsTheCallAtOnce_namingTheLimit() {
    String s = newSession();
    run(s, "big = 10 ** 1000", 10);
    // At once: the call fails naming the limit (a wait for the reader would hang the class).
    assertThatThrownBy(() -> service.getContext(s, List.of("big")))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("1000");
    assertThat(run(s, "print('after')", 10).stdout()).isEqualTo("after\n");
    service.closeSession(s);
  }

  @Test
  void backgroundWriterBetweenRuns_isCountedCappedAndStopped_andCostsTheServerLittleCpu()
      throws Exception {
    String s = newSession();
    for (int i = 0; i < 20; i++) {
      run(s, "print(" + i + ")", 10); // warm the JIT: its compilations would count below
    }
    String marker = "pysandbox-bg-writer-" + System.nanoTime();
    RunRecord started =
        run(s, "import subprocess\nsubprocess.Popen(['yes', '" + marker + "'])", 10);
    assertThat(started.status()).as(started.message()).isEqualTo(RunStatus.SUCCEEDED);
    // The claim is about the threads that read sandboxes' output: past the limit they stop
    // reading (a reader that kept draining would spend about a core for the 3 s). The whole
    // JVM's CPU is not measured: notebooks written in the background, the JIT and the
    // collector are busy in the same seconds for reasons of their own.
    long cpuBefore = ioThreadsCpuMillis();
    // Past the limit the runner is told to stop every other process: the writer goes away
    // while the session is idle, and no run had to come to stop it.
    // The writer's 64 MiB must pass through the socket first: on a loaded 2-core machine (three
    // forks, other builds) that alone can take longer than Await.DEFAULT.
    Await.until(
        "the background writer " + marker + " stopped",
        Duration.ofSeconds(60),
        () -> ProcessTable.withCommandLineContaining(marker),
        List::isEmpty);
    long cpu = ioThreadsCpuMillis() - cpuBefore;
    RunRecord next = run(s, "print('x')", 10);
    assertThat(cpu)
        .as("output readers' CPU (ms) from the writer's start to its stop, while the session idled")
        .isLessThan(500);
    assertThat(next.status()).as(next.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(next.stdout()).endsWith("x\n").contains(marker + "\n" + marker);
    // Where the writer's output split between the run that started it and the idle time is a
    // race: the first line kept may be the end of a marker line.
    String firstLine = next.stdout().substring(0, next.stdout().indexOf('\n'));
    assertThat(marker).endsWith(firstLine);
    assertThat(next.stdoutTruncated()).isTrue();
    assertThat(next.stdout().length()).isLessThan(2 * 1024 * 1024);
    assertThat(next.message()).contains("between runs").contains("output_max_mb");
    long between = Long.parseLong(next.message().replaceAll("^\\D*(\\d+) bytes.*$", "$1"));
    assertThat(between).isGreaterThan(64L << 20).isLessThan(next.stdoutBytes() + 1);
    // Past the limit the writer was stopped, and it stays stopped.
    RunRecord look =
        run(
            s,
            "import os\n"
                + "n = 0\n"
                + "for p in os.listdir('/proc'):\n"
                + "    try:\n"
                + "        n += p.isdigit() and b'"
                + marker
                + "' in open('/proc/' + p + '/cmdline', 'rb').read()\n"
                + "    except OSError:\n"
                + "        pass\n"
                + "print(n)",
            10);
    assertThat(look.stdout()).isEqualTo("0\n");
    assertThat(ProcessTable.withCommandLineContaining(marker)).isEmpty();
    service.closeSession(s);
  }

  /** CPU time of this JVM's threads that read sandboxes' sockets ({@code pysandbox-io}). */
  private static long ioThreadsCpuMillis() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long nanos = 0;
    for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (t != null && t.getThreadName().startsWith("pysandbox-io")) {
        nanos += Math.max(0, threads.getThreadCpuTime(t.getThreadId()));
      }
    }
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}

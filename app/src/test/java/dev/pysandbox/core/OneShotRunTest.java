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
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.ProcessTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** One-shot runs in real bubblewrap sandboxes: results, errors, limits, kills, validation. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class OneShotRunTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;

  @BeforeAll
  static void start() {
    service =
        TestServices.start(
            dataDir, TestServices.withoutImportPolicy(dataDir, Map.of("output_limit", "65536")));
  }

  @AfterAll
  static void stop() {
    service.close();
  }

  private static RunRecord run(String code) {
    return service.run(ExecutionRequest.of(code));
  }

  private static RunRecord run(String code, int timeoutSeconds) {
    return service.run(new ExecutionRequest(code, null, null, timeoutSeconds));
  }

  @Test
  void run_print_capturesStdoutAndSucceeds() {
    RunRecord r = run("print(6*7)");
    assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).isEqualTo("42\n");
    assertThat(r.exitCode()).isZero();
    assertThat(r.runId()).matches("run_[0-9a-f]{20}");
    assertThat(r.codeHash()).hasSize(64);
    assertThat(r.durationMs()).isNotNull();
  }

  @Test
  void run_trailingExpression_isTheResult() {
    RunRecord r = run("x = 20\nx + 22");
    assertThat(r.result()).containsEntry("text/plain", "42");
    assertThat(run("1+1").result()).containsEntry("text/plain", "2");
    assertThat(run("1+1;").result()).as("a trailing ';' suppresses the result").isNull();
  }

  @Test
  void run_exception_failsWithTracebackAtUserLine() {
    RunRecord r = run("a = 1\nb = 0\nprint('before')\na / b\n");
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.stdout()).isEqualTo("before\n");
    assertThat(r.error().name()).isEqualTo("ZeroDivisionError");
    assertThat(r.error().value()).isEqualTo("division by zero");
    assertThat(r.error().traceback())
        .contains("line 4")
        .contains("a / b")
        .doesNotContain("runner.py");
    assertThat(r.exitCode()).isEqualTo(1);
  }

  @Test
  void run_outputOfChildProcessesAndCCode_isCaptured() {
    RunRecord r =
        run(
            "import os, subprocess, ctypes\n"
                + "os.system('echo from-shell')\n"
                + "subprocess.run(['sh', '-c', 'echo to-stderr >&2'])\n"
                + "ctypes.CDLL(None).write(1, b'from-c\\n', 7)\n");
    assertThat(r.stdout()).contains("from-shell\n").contains("from-c\n");
    assertThat(r.stderr()).contains("to-stderr\n");
  }

  @Test
  void run_exitPaths_giveClearResults() {
    RunRecord exit3 = run("import sys\nsys.exit(3)");
    assertThat(exit3.status()).isEqualTo(RunStatus.FAILED);
    assertThat(exit3.exitCode()).isEqualTo(3);
    assertThat(exit3.error().name()).isEqualTo("SystemExit");

    RunRecord exit0 = run("import sys\nprint('done')\nsys.exit(0)");
    assertThat(exit0.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(exit0.stdout()).isEqualTo("done\n");

    RunRecord hard = run("import os\nprint('bye', flush=True)\nos._exit(5)");
    assertThat(hard.status()).isEqualTo(RunStatus.FAILED);
    assertThat(hard.exitCode()).isEqualTo(5);
    assertThat(hard.stdout()).isEqualTo("bye\n");
    assertThat(hard.message()).contains("exited with code 5");

    RunRecord ret = run("return 5");
    assertThat(ret.status()).isEqualTo(RunStatus.FAILED);
    assertThat(ret.error().name()).isEqualTo("SyntaxError");
    assertThat(ret.error().traceback()).contains("return 5");
  }

  @Test
  void run_sleepBeyondTimeout_isKilledAtTheLimit() {
    RunRecord r = run("import time\nprint('start', flush=True)\ntime.sleep(120)", 2);
    assertThat(r.status()).isEqualTo(RunStatus.TIMED_OUT);
    // Not before its limit, as the server measured it (how soon after is the benchmark's).
    assertThat(r.durationMs()).isGreaterThanOrEqualTo(2000);
    assertThat(r.stdout()).isEqualTo("start\n");
    assertThat(r.message()).contains("limit 2 s").contains("no process of it is left");
    assertThat(r.exitCode()).isNull();
  }

  /**
   * Runs the code while watching the host's process table, and fails unless a process whose command
   * line holds {@code marker} was seen while the run was in flight: so that "no such process
   * afterwards" is known to mean it was killed, not that it never started or cannot be seen from
   * here.
   */
  private static RunRecord runSeeing(String marker, String code, int timeoutSeconds)
      throws Exception {
    CompletableFuture<RunRecord> running =
        CompletableFuture.supplyAsync(() -> run(code, timeoutSeconds));
    boolean seen = false;
    while (!running.isDone() && !seen) {
      seen = !ProcessTable.withCommandLineContaining(marker).isEmpty();
      if (!seen) {
        Thread.sleep(5);
      }
    }
    RunRecord r = running.get(timeoutSeconds + 20L, TimeUnit.SECONDS);
    assertThat(seen)
        .as("a process with " + marker + " was seen on the host while the run ran: " + r.stdout())
        .isTrue();
    return r;
  }

  @Test
  void run_timeout_killsProcessesThatResist() throws Exception {
    String marker = "pysandbox-marker-" + UUID.randomUUID();
    String code =
        "import signal, subprocess, sys, time\n"
            + "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            + "child = 'import signal, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
            + "while True:\\n    try:\\n        time.sleep(100)\\n    except KeyboardInterrupt:\\n"
            + "        pass'\n"
            + "subprocess.Popen([sys.executable, '-c', child, '"
            + marker
            + "'], start_new_session=True)\n"
            + "subprocess.Popen(['sh', '-c', 'sleep 1000; echo "
            + marker
            + "'], start_new_session=True)\n"
            + "while True:\n"
            + "    try:\n"
            + "        time.sleep(100)\n"
            + "    except KeyboardInterrupt:\n"
            + "        print('caught', flush=True)\n";
    RunRecord r = runSeeing(marker, code, 2);
    assertThat(r.status()).isEqualTo(RunStatus.TIMED_OUT);
    assertThat(ProcessTable.withCommandLineContaining(marker)).isEmpty();
  }

  @Test
  void run_finishedRun_leavesNoDetachedProcessBehind() throws Exception {
    String marker = "pysandbox-marker-" + UUID.randomUUID();
    // The code waits until its detached child runs, and then long enough for the host to see it.
    RunRecord r =
        runSeeing(
            marker,
            "import subprocess, time\n"
                + "p = subprocess.Popen(['sh', '-c', 'sleep 1000; echo "
                + marker
                + "'], start_new_session=True)\n"
                + "for _ in range(500):\n"
                + "    if b'"
                + marker
                + "' in open(f'/proc/{p.pid}/cmdline', 'rb').read():\n"
                + "        break\n"
                + "    time.sleep(0.01)\n"
                + "time.sleep(1)\n"
                + "print('spawned')",
            20);
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    Await.until(
        "no process left with " + marker,
        () -> ProcessTable.withCommandLineContaining(marker),
        List::isEmpty);
  }

  @Test
  void run_hugeOutput_keepsHeadAndTailAndCountsEverything() {
    RunRecord r =
        run(
            "import sys\nprint('HEAD')\nfor i in range(200):\n    print('x' * 50_000)\nprint('TAIL')");
    assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdoutTruncated()).isTrue();
    assertThat(r.stdoutBytes()).isEqualTo(5 + 200L * 50_001 + 5);
    assertThat(r.stdout()).startsWith("HEAD\n").endsWith("TAIL\n").contains("bytes omitted");
    assertThat(r.stdout().length()).isLessThan(65536 + 300);
    assertThat(r.stderrTruncated()).isFalse();
  }

  @Test
  void run_endlessOutput_isCapped_andStoppedAtTheOutputLimit() {
    RunRecord r = run("while True:\n    print('x' * 10**6)", 20);
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.killReason()).isEqualTo(KillReason.OUTPUT_LIMIT);
    assertThat(r.stdoutTruncated()).isTrue();
    assertThat(r.stdoutBytes()).isGreaterThan(64L << 20);
    assertThat(r.stdout().length()).isLessThan(65536 + 300);
  }

  @Test
  void run_filesWrittenToWorkspace_areKeptWithTheRun() throws Exception {
    RunRecord r =
        run(
            "open('report.txt', 'w').write('hello')\nimport os\nos.makedirs('sub')\n"
                + "open('sub/data.csv', 'w').write('a,b\\n1,2\\n')");
    assertThat(r.artifacts())
        .extracting(a -> a.path() + ":" + a.sizeBytes() + ":" + a.mediaType() + ":" + a.change())
        .containsExactly("report.txt:5:text/plain:created", "sub/data.csv:8:text/csv:created");
    // Kept in the blob store, named by its content's sha256.
    String sha = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    assertThat(r.artifacts().get(0).sha256()).isEqualTo(sha);
    Path blob = Path.of(r.artifactsDir()).resolve(sha.substring(0, 2)).resolve(sha);
    assertThat(Files.readString(blob)).isEqualTo("hello");
  }

  @Test
  void run_badCode_isRejectedBeforeAnythingRuns() {
    long before = service.listRuns(new RunQuery(1000, 0, null, null)).total();
    assertThatThrownBy(() -> run(""))
        .isInstanceOf(PysandboxException.class)
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> run("   \n\t "))
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> run("print(1)\0"))
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("NUL");
    String big = "# " + "é".repeat(50_000);
    assertThatThrownBy(() -> run(big))
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.CODE_TOO_LARGE))
        .hasMessageContaining("100002 bytes")
        .hasMessageContaining("100000");
    assertThatThrownBy(() -> run("print(1)", 0))
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> run("print(1)", 3601)).hasMessageContaining("between 1 and 3600");
    assertThat(service.listRuns(new RunQuery(1000, 0, null, null)).total()).isEqualTo(before);
  }

  @Test
  void run_descriptionIsData_neverCode() {
    RunRecord r =
        service.run(
            new ExecutionRequest("print('ok')", null, "'); import os; os._exit(9) #", null));
    assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(service.getRun(r.runId(), true).description())
        .isEqualTo("'); import os; os._exit(9) #");
  }

  @Test
  void runs_areRecordedAndListed() {
    RunRecord r = run("print('history')");
    RunRecord stored = service.getRun(r.runId(), true);
    assertThat(stored.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(stored.code()).isEqualTo("print('history')");
    assertThat(stored.stdout()).isEqualTo("history\n");
    assertThat(service.listRuns(new RunQuery(5, 0, null, null)).runs())
        .extracting(s -> s.runId())
        .contains(r.runId());
    assertThat(service.listRuns(new RunQuery(50, 0, RunStatus.TIMED_OUT, null)).runs())
        .allSatisfy(s -> assertThat(s.status()).isEqualTo(RunStatus.TIMED_OUT));
    assertThatThrownBy(() -> service.getRun("run_doesnotexist", true))
        .satisfies(e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.NOT_FOUND));
    assertThatThrownBy(() -> service.getRun("../../etc/passwd", true))
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }
}

package dev.pysandbox.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.pysandbox.Await;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The standing escape suite, written once and run against every backend with the same limits (as
 * {@link SandboxBackendContract} is for the SPI): hostile code against every limit and wall of the
 * sandbox, through the whole service. Each case asserts the containment (a clear status and kill
 * reason); after each, the server has kept answering a concurrent {@code list_runs} without error
 * all along, nothing of a killed sandbox survives on the host ({@link #sandboxesLeft}: the
 * backend's own trace, cgroups or containers), and a run in a fresh session works. How fast {@code
 * list_runs} answers under attack is a benchmark figure ({@code BENCH_ONLY=responsiveness
 * scripts/bench.sh}), not asserted here; nor is how soon after its limit a run is stopped.
 *
 * <p>The import policy is off ({@link TestServices#withoutImportPolicy}): the code imports socket
 * and ctypes to attack the OS sandbox itself.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
public abstract class EscapeSuite {
  /** How long the last list_runs call may still take once a case ends: a hang, not a speed. */
  private static final long WATCHER_STOP_MILLIS = 15_000;

  /** Python: {@code t(name, fn)} prints "name ALLOWED", or "name DENIED" when fn raises OSError. */
  private static final String TRY =
      "def t(name, fn):\n"
          + "    try:\n        fn()\n        print(name, 'ALLOWED')\n"
          + "    except OSError:\n        print(name, 'DENIED')\n";

  protected Path dataDir;
  protected DefaultSandboxService service;
  private HttpServer origin;

  private ScheduledExecutorService watcher;
  private final AtomicLong listRunsAnswers = new AtomicLong();
  private final AtomicReference<Throwable> listRunsFailure = new AtomicReference<>();

  /** The settings that choose and reach this backend ({@code backend}, its engine ...). */
  protected abstract Map<String, String> backendSettings();

  /**
   * What of this data directory's sandboxes is still on the host: cgroups for bwrap, containers for
   * docker, one entry each. The pool's sandbox and the open sessions' are among them.
   */
  protected abstract List<String> sandboxesLeft() throws Exception;

  /**
   * What Python may see of an allocation past the memory limit: bwrap limits the address space as
   * well, so the allocation always fails and the code gets a {@code MemoryError} it could catch.
   */
  protected Set<String> hugeAllocationErrors() {
    return Set.of("MemoryError");
  }

  /**
   * Variables the engine itself gives the sandbox's first process, beside {@link
   * RunnerLaunch#environment}'s: not leaks of the server's, whatever their value.
   */
  protected Set<String> variablesOfTheEngine() {
    return Set.of("LC_CTYPE");
  }

  /** Closes what {@link #sandboxesLeft} uses, after the last look (the server is closed then). */
  protected void closeProbes() {}

  @BeforeAll
  @Timeout(value = 900, unit = TimeUnit.SECONDS) // a container engine may wait for its image build
  void start(@TempDir Path dir) throws IOException {
    dataDir = dir;
    origin = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    origin.createContext(
        "/",
        exchange -> {
          byte[] body = "from the origin".getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    origin.start();
    Map<String, String> settings = new HashMap<>(backendSettings());
    settings.put("pool_size", "1");
    settings.put("cancel_grace", "1");
    settings.put("tiers_allowed", "basic,network");
    settings.put("network_allow", "127.0.0.1:" + origin.getAddress().getPort());
    settings.put("network_allow_private", "true");
    service = TestServices.start(dataDir, TestServices.withoutImportPolicy(dataDir, settings));
  }

  @AfterAll
  void stop() throws Exception {
    try {
      if (service != null) {
        service.close();
        assertThat(sandboxesLeft()).as("sandboxes left after the server closed").isEmpty();
      }
    } finally {
      if (origin != null) {
        origin.stop(0);
      }
      closeProbes();
    }
  }

  /**
   * Calls list_runs every 50 ms while a case runs, counting the answers; the first failure stops
   * the calls and is kept for the check after the case.
   */
  @BeforeEach
  void watchResponsiveness() {
    listRunsAnswers.set(0);
    listRunsFailure.set(null);
    watcher = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "list-runs-watcher"));
    watcher.scheduleWithFixedDelay(
        () -> {
          try {
            service.listRuns(new RunQuery(5, 0, null, null));
            listRunsAnswers.incrementAndGet();
          } catch (Throwable t) {
            listRunsFailure.compareAndSet(null, t);
            throw t;
          }
        },
        0,
        50,
        TimeUnit.MILLISECONDS);
  }

  @AfterEach
  void serverStayedResponsive_stillRunsCode_andLeftNoSandbox() throws Exception {
    // A case quicker than the watcher's first call still needs one answer, right after it.
    Await.until("list_runs answered at least once", listRunsAnswers::get, n -> n > 0);
    watcher.shutdown();
    assertThat(watcher.awaitTermination(WATCHER_STOP_MILLIS, TimeUnit.MILLISECONDS))
        .as("list_runs still had not answered %d ms after the case ended", WATCHER_STOP_MILLIS)
        .isTrue();
    assertThat(listRunsFailure.get()).as("list_runs failed while the case ran").isNull();
    // A case that failed half-way may have left its session open: the next case starts clean.
    service.listSessions().forEach(s -> service.closeSession(s.sessionId()));
    String id = service.createSession(null, null).sessionId();
    try {
      RunRecord r = service.run(new ExecutionRequest("print(6 * 7)", id, null, 20));
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout()).isEqualTo("42\n");
    } finally {
      service.closeSession(id);
    }
    // What a killed sandbox held is removed in the background.
    Await.until(
        "no sandbox left on the host but the pool's", this::sandboxesLeftNow, s -> s.size() <= 1);
  }

  private List<String> sandboxesLeftNow() {
    try {
      return sandboxesLeft();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  // -- helpers -----------------------------------------------------------------------------------

  private RunRecord oneShot(String code, int timeoutSeconds) {
    return service.run(new ExecutionRequest(code, null, null, timeoutSeconds));
  }

  private RunRecord inSession(String session, String code, int timeoutSeconds) {
    return service.run(new ExecutionRequest(code, session, null, timeoutSeconds));
  }

  private String session(LimitRequest limits) {
    return service.createSession(null, null, limits).sessionId();
  }

  private static void assertStopped(RunRecord r, RunStatus status, String reason) {
    assertThat(r.status()).as(r.message()).isEqualTo(status);
    assertThat(r.killReason() == null ? null : r.killReason().wireName())
        .as(r.message())
        .isEqualTo(reason);
    assertThat(r.message()).isNotBlank();
  }

  /** No host process whose command line holds the marker, once the host has reaped them. */
  private static void assertNoProcessWith(String marker) throws InterruptedException {
    Await.until(
        "no process left behind with " + marker,
        () -> ProcessTable.withCommandLineContaining(marker),
        List::isEmpty);
  }

  // -- memory ------------------------------------------------------------------------------------

  @Test
  void memory_hugeAllocations_failWithMemoryLimit() {
    for (String code : List.of("x = bytearray(10**11)", "x = 'a' * 10**10")) {
      RunRecord r = oneShot(code, 20);
      assertStopped(r, RunStatus.FAILED, "memory_limit");
      assertThat(r.message()).contains("512 MiB");
      assertThat(r.error().name()).isIn(hugeAllocationErrors());
    }
  }

  @Test
  void memory_growingList_isKilledByTheKernel_atTheSessionsLimit() {
    String id = session(new LimitRequest(128, null, null, null));
    RunRecord r = inSession(id, "x = []\nwhile True:\n    x.append(b'1' * 10**6)", 30);
    assertStopped(r, RunStatus.FAILED, "memory_limit");
    assertThat(r.message()).contains("128 MiB");
    assertThat(r.peakMemoryBytes()).isGreaterThan(100L << 20);
    assertThat(r.limits()).containsEntry("memory_limit_mb", 128L);
    assertThat(service.listSessions())
        .filteredOn(s -> s.sessionId().equals(id))
        .singleElement()
        .satisfies(s -> assertThat(s.deadReason()).startsWith("memory_limit"));
    service.closeSession(id);
  }

  // -- processes ---------------------------------------------------------------------------------

  @Test
  void processes_forkBomb_isBoundedByThePidsLimit() {
    String id = session(new LimitRequest(null, 32, null, null));
    RunRecord r = inSession(id, "import os\nwhile True:\n    os.fork()", 30);
    assertStopped(r, RunStatus.FAILED, "pids_limit");
    assertThat(r.message()).contains("32 processes");
    service.closeSession(id);
  }

  // -- time --------------------------------------------------------------------------------------

  @Test
  void time_busyLoop_longCCall_ignoredSigterm_caughtSigint_allTimeOut() {
    List<String> codes =
        List.of(
            "while True: pass",
            "x = 10**10**8",
            "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: time.sleep(1)",
            "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except KeyboardInterrupt:\n        pass");
    // Four runs that each wait out their limit: side by side, the limit is waited for once.
    ExecutorService runners = Executors.newFixedThreadPool(codes.size());
    try {
      List<CompletableFuture<RunRecord>> runs =
          codes.stream()
              .map(code -> CompletableFuture.supplyAsync(() -> oneShot(code, 2), runners))
              .toList();
      for (int i = 0; i < codes.size(); i++) {
        RunRecord r = runs.get(i).join();
        assertStopped(r, RunStatus.TIMED_OUT, "timeout");
        assertThat(r.message())
            .as(codes.get(i))
            .contains("(limit 2 s)")
            .contains("the sandbox was killed");
      }
    } finally {
      runners.shutdownNow();
    }
  }

  @Test
  void time_detachedGrandchildren_dieWithTheSandbox() throws Exception {
    String marker = "grandchild-" + UUID.randomUUID();
    RunRecord r =
        oneShot(
            "import subprocess, time\n"
                + "for _ in range(3):\n"
                + "    subprocess.Popen(['sh', '-c', 'sleep 600; echo "
                + marker
                + "'], start_new_session=True)\n"
                + "subprocess.Popen(['setsid', 'sh', '-c', 'sleep 600; echo "
                + marker
                + "'])\n"
                + "time.sleep(600)",
            2);
    assertStopped(r, RunStatus.TIMED_OUT, "timeout");
    assertNoProcessWith(marker);
  }

  @Test
  void time_sessionTimeout_killsTheSessionsSandbox() {
    String id = session(LimitRequest.DEFAULTS);
    RunRecord r = inSession(id, "while True: pass", 1);
    assertStopped(r, RunStatus.TIMED_OUT, "timeout");
    assertThat(r.cpuMillis()).as("CPU time measured by the server").isPositive();
    service.closeSession(id);
  }

  // -- disk --------------------------------------------------------------------------------------

  @Test
  void disk_writerInTheWorkspace_isStoppedAtTheQuota_andTheSessionLives() {
    String id = session(new LimitRequest(null, null, null, 50));
    try {
      RunRecord r =
          inSession(
              id,
              "i = 0\nwhile True:\n"
                  + "    with open(f'/mnt/data/f{i}', 'wb') as f:\n"
                  + "        f.write(b'0' * 10**7)\n"
                  + "    i += 1",
              30);
      assertStopped(r, RunStatus.FAILED, "disk_quota");
      assertThat(r.message()).contains("50 MiB");
      RunRecord one =
          inSession(
              id,
              "with open('/mnt/data/big', 'wb') as f:\n    while True: f.write(b'0' * 10**7)",
              30);
      assertThat(one.killReason()).as(one.message()).isEqualTo(KillReason.DISK_QUOTA);
      RunRecord cleanup =
          inSession(
              id,
              "import os, glob\nfor p in glob.glob('/mnt/data/*'): os.remove(p)\nprint('ok')",
              20);
      assertThat(cleanup.status()).as(cleanup.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(cleanup.stdout()).isEqualTo("ok\n");
    } finally {
      service.closeSession(id);
    }
  }

  @Test
  void disk_writerInTmp_isStoppedByTheTmpCap() {
    RunRecord r =
        oneShot("with open('/tmp/fill', 'wb') as f:\n    while True: f.write(b'0' * 10**7)", 30);
    assertStopped(r, RunStatus.FAILED, "disk_quota");
    assertThat(r.message()).contains("No space left on device").contains("/tmp holds 256 MiB");
  }

  // -- output ------------------------------------------------------------------------------------

  @Test
  void output_100MBInALoop_isStoppedAtTheOutputLimit() {
    RunRecord r = oneShot("import sys\nwhile True: sys.stdout.write('y' * 10**6)", 30);
    assertStopped(r, RunStatus.FAILED, "output_limit");
    assertThat(r.stdoutTruncated()).isTrue();
    assertThat(r.stdout().length()).isLessThan(2 << 20);
  }

  @Test
  void output_single50MBLine_isKeptTruncated() {
    RunRecord r = oneShot("print('z' * 50_000_000)", 30);
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdoutBytes()).isEqualTo(50_000_001);
    assertThat(r.stdoutTruncated()).isTrue();
  }

  @Test
  void output_fromACExtensionAndAChildProcess_isCaptured_andAFloodingChildIsStopped() {
    RunRecord r =
        oneShot(
            "import ctypes, subprocess, sys\n"
                + "libc = ctypes.CDLL(None)\nlibc.puts(b'from C')\nlibc.fflush(None)\n"
                + "subprocess.run(['echo', 'from a child'])\n"
                + "subprocess.run(['sh', '-c', 'echo child stderr >&2'])",
            20);
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).contains("from C\n").contains("from a child\n");
    assertThat(r.stderr()).contains("child stderr");
    RunRecord flood = oneShot("import subprocess\nsubprocess.run(['yes'])", 30);
    assertStopped(flood, RunStatus.FAILED, "output_limit");
  }

  // -- network -----------------------------------------------------------------------------------

  @Test
  void network_everyWayOut_isRefused() throws Exception {
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      RunRecord r =
          oneShot(
              "import importlib, socket, urllib.request\n"
                  + TRY
                  + "t('urlopen', lambda: urllib.request.urlopen('http://1.1.1.1', timeout=5))\n"
                  + "t('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))\n"
                  + "t('host', lambda: socket.create_connection(('127.0.0.1', "
                  + listener.getLocalPort()
                  + "), timeout=3))\n"
                  + "importlib.reload(socket)\n"
                  + "t('reloaded', lambda: socket.create_connection(('1.1.1.1', 80), timeout=3))\n"
                  + "t('netlink', lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))\n"
                  + "t('inet6', lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))\n"
                  + "t('unix', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))\n",
              30);
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout())
          .isEqualTo(
              "urlopen DENIED\nraw DENIED\nhost DENIED\nreloaded DENIED\nnetlink DENIED\n"
                  + "inet6 DENIED\nunix ALLOWED\n");
    }
  }

  @Test
  void networkTier_goesOutOnlyThroughTheProxy_toWhatIsAllowed() {
    String id = service.createSession(null, null, null, "network").sessionId();
    try {
      int port = origin.getAddress().getPort();
      RunRecord r =
          inSession(
              id,
              "import urllib.request\n"
                  + "print(urllib.request.urlopen('http://127.0.0.1:"
                  + port
                  + "/x', timeout=10).read().decode())\n"
                  + "try:\n"
                  + "    urllib.request.urlopen('http://127.0.0.1:"
                  + (port + 1)
                  + "/', timeout=10)\n"
                  + "except Exception as e:\n"
                  + "    print('refused', e)\n",
              30);
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout()).startsWith("from the origin\nrefused HTTP Error 403");
    } finally {
      service.closeSession(id);
    }
  }

  // -- kernel surface ----------------------------------------------------------------------------

  @Test
  void kernel_ptraceUnshareMount_areRefused_andProcAndSysRevealNothing() {
    RunRecord r =
        oneShot(
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                + "print('ptrace', libc.ptrace(0, 0, 0, 0), ctypes.get_errno())\n"
                + "print('unshare', libc.unshare(0x10000000), ctypes.get_errno())\n"
                + "print('mount', libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), ctypes.get_errno())\n"
                + "print('seccomp', [l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:')][0])\n"
                + "try:\n    open('/sys/fs/cgroup/x', 'w')\n    print('sys ALLOWED')\n"
                + "except OSError:\n    print('sys DENIED')\n",
            20);
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout())
        .isEqualTo("ptrace -1 1\nunshare -1 1\nmount -1 1\nseccomp 2\nsys DENIED\n");
    RunRecord proc =
        oneShot(
            "print(open('/proc/1/environ', 'rb').read().decode())\nprint('---')\n"
                + "print(open('/proc/self/mountinfo').read())\nprint('===')\n"
                + "print(open('/proc/self/cgroup').read())",
            20);
    String out = proc.stdout();
    String environ = out.substring(0, out.indexOf("---"));
    // No variable of the server's with its value, unless the sandbox sets that value itself.
    Map<String, String> sandboxes = RunnerLaunch.environment(null, false);
    Map<String, String> seen = new HashMap<>();
    for (String pair : environ.split("\0")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        seen.put(pair.substring(0, eq).strip(), pair.substring(eq + 1));
      }
    }
    assertThat(
            System.getenv().keySet().stream()
                .filter(seen::containsKey)
                .filter(key -> !variablesOfTheEngine().contains(key))
                .filter(key -> seen.get(key).equals(System.getenv(key)))
                .filter(key -> !seen.get(key).equals(sandboxes.get(key)))
                .toList())
        .as("the server's variables in the sandbox's first process: %s", seen)
        .isEmpty();
    String mounts = out.substring(out.indexOf("---"), out.indexOf("==="));
    String cgroups = out.substring(out.indexOf("==="));
    assertThat(mounts)
        .as("nothing of the data directory but the sandbox's own files")
        .doesNotContain("pysandbox.db")
        .doesNotContain(dataDir.resolve("runs").toString())
        .doesNotContain(dataDir.resolve("instances").toString());
    assertThat(cgroups)
        .as("no cgroup of this data directory's servers is named to the code")
        .doesNotContain("pysandbox-" + new DataLayout(dataDir).identity());
  }

  /**
   * FIFOs and file leases are how code makes a server's open of a workspace file wait; the server
   * opens without blocking anyway (WorkspaceAttackTest), and the filter refuses both.
   */
  @Test
  void kernel_fifosAndFileLeases_areRefused() {
    RunRecord r =
        oneShot(
            "import fcntl, os, stat\n"
                + TRY
                + "t('mkfifo', lambda: os.mkfifo('/mnt/data/f'))\n"
                + "t('mknod-fifo', lambda: os.mknod('/mnt/data/g', stat.S_IFIFO | 0o600))\n"
                + "t('mknodat-fifo', lambda: os.mknod('k', stat.S_IFIFO | 0o600,"
                + " dir_fd=os.open('/mnt/data', os.O_RDONLY)))\n"
                + "t('mknod-file', lambda: os.mknod('/mnt/data/h', stat.S_IFREG | 0o600))\n"
                + "open('/mnt/data/l', 'w').close()\n"
                + "fd = os.open('/mnt/data/l', os.O_RDONLY)\n"
                + "t('read-lease', lambda: fcntl.fcntl(fd, 1024, fcntl.F_RDLCK))\n"
                + "t('write-lease', lambda: fcntl.fcntl(fd, 1024, fcntl.F_WRLCK))\n"
                + "t('lock', lambda: fcntl.flock(fd, fcntl.LOCK_SH))\n",
            20);
    assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout())
        .isEqualTo(
            "mkfifo DENIED\nmknod-fifo DENIED\nmknodat-fifo DENIED\nmknod-file ALLOWED\n"
                + "read-lease DENIED\nwrite-lease DENIED\nlock ALLOWED\n");
  }

  // -- files -------------------------------------------------------------------------------------

  @Test
  void files_hostFilesStayOutOfReach_andTheServerFollowsNoLinkOut() throws Exception {
    Files.writeString(dataDir.resolve("secret.txt"), "host secret");
    String id = session(LimitRequest.DEFAULTS);
    try {
      RunRecord r =
          inSession(
              id,
              "import os, pathlib\n"
                  + TRY
                  + "t('passwd', lambda: open('/etc/passwd', 'a'))\n"
                  + "t('root-fs', lambda: open('/usr/x', 'w'))\n"
                  + "t('root', lambda: list(pathlib.Path('/root').iterdir()))\n"
                  + "t('data-dir', lambda: open('"
                  + dataDir.resolve("secret.txt")
                  + "').read())\n"
                  + "t('hardlink', lambda: os.link('/etc/passwd', '/mnt/data/passwd'))\n"
                  + "t('hardlink-usr', lambda: os.link('/usr/bin/python3', '/mnt/data/py'))\n"
                  + "os.symlink('"
                  + dataDir.resolve("pysandbox.db")
                  + "', '/mnt/data/db')\n"
                  + "os.symlink('/etc/shadow', '/mnt/data/shadow')\n"
                  + "t('through-link', lambda: open('/mnt/data/db', 'rb').read())\n",
              20);
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout())
          .isEqualTo(
              "passwd DENIED\nroot-fs DENIED\nroot DENIED\ndata-dir DENIED\nhardlink DENIED\n"
                  + "hardlink-usr DENIED\nthrough-link DENIED\n");
      assertThat(r.artifacts())
          .as("links are not files the server collects: they are only reported")
          .extracting(a -> a.path() + ": " + a.skipped())
          .containsExactly(
              "db: a symbolic link: only regular files are kept",
              "shadow: a symbolic link: only regular files are kept");
      assertThat(r.artifactsDir()).isNull();
      for (String link : List.of("db", "shadow")) {
        assertThatThrownBy(() -> service.readArtifact(null, id, link, 1 << 20))
            .isInstanceOf(PysandboxException.class);
      }
      RunRecord chmod =
          inSession(
              id,
              "import os\nopen('/mnt/data/kept.txt', 'w').write('mine')\n"
                  + "os.chmod('/mnt/data/kept.txt', 0)\nos.chmod('/mnt/data', 0)",
              20);
      assertThat(chmod.status()).as(chmod.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(chmod.artifacts()).extracting(a -> a.path()).containsExactly("kept.txt");
      assertThat(service.readArtifact(null, id, "kept.txt", 1 << 20).content())
          .as("the server still reads what the code locked away")
          .isEqualTo("mine");
    } finally {
      service.closeSession(id);
    }
  }

  // -- faults ------------------------------------------------------------------------------------

  @Test
  void sandboxKilledFromOutside_failsTheRun_andTheServerCarriesOn() throws Exception {
    String id = session(LimitRequest.DEFAULTS);
    String marker = "987654" + (System.nanoTime() % 1000);
    // Its failure (never saw the child, no parent to kill) is reported by get() below.
    CompletableFuture<Long> killer =
        CompletableFuture.supplyAsync(
            () -> {
              List<Long> sleepers;
              try {
                sleepers =
                    Await.until(
                        "a process 'sleep " + marker + "' on the host",
                        Duration.ofSeconds(20),
                        () -> ProcessTable.withCommandLineContaining("sleep " + marker),
                        pids -> !pids.isEmpty());
              } catch (InterruptedException e) {
                throw new CompletionException(e);
              }
              long runner =
                  ProcessHandle.of(sleepers.get(0))
                      .flatMap(ProcessHandle::parent)
                      .orElseThrow(() -> new IllegalStateException("sleep's parent is gone"))
                      .pid();
              ProcessTable.killNow(runner);
              return runner;
            });
    RunRecord r =
        inSession(
            id,
            "import subprocess, time\nsubprocess.Popen(['sleep', '"
                + marker
                + "'])\ntime.sleep(30)",
            40);
    killer.get(5, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.error().name()).isEqualTo("SandboxExited");
    assertThat(r.message()).contains("before the run finished");
    assertNoProcessWith("sleep " + marker);
    service.closeSession(id);
  }

  // -- what a session keeps ----------------------------------------------------------------------

  @Test
  void sessions_keepVariablesAndFilesBetweenCalls() {
    String id = session(LimitRequest.DEFAULTS);
    try {
      inSession(id, "x = 41\nopen('/mnt/data/f.txt', 'w').write('kept')", 20);
      RunRecord r = inSession(id, "print(x + 1, open('f.txt').read())", 20);
      assertThat(r.stdout()).isEqualTo("42 kept\n");
    } finally {
      service.closeSession(id);
    }
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.ProcessTable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The standing escape suite: hostile code against every limit and wall of the sandbox. Each case
 * asserts the containment (a clear status and kill reason), that the server kept answering a
 * concurrent {@code list_runs} without error all along, that nothing of a killed sandbox survives,
 * and that a run in a fresh session works afterwards. How fast {@code list_runs} answers under
 * attack is a benchmark figure ({@code BENCH_ONLY=responsiveness scripts/bench.sh}), not asserted
 * here.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class EscapeSuiteTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;

  /** How long the last list_runs call may still take once a case ends: a hang, not a speed. */
  private static final long WATCHER_STOP_MILLIS = 15_000;

  private Thread watcher;
  private final AtomicBoolean watching = new AtomicBoolean();
  private final AtomicLong listRunsAnswers = new AtomicLong();
  private final AtomicReference<Throwable> listRunsFailure = new AtomicReference<>();

  @BeforeAll
  static void start() {
    service =
        TestServices.start(
            dataDir,
            TestServices.withoutImportPolicy(
                dataDir, Map.of("pool_size", "1", "cancel_grace", "1")));
  }

  @AfterAll
  static void stop() {
    service.close();
  }

  /**
   * Calls list_runs all the time while a case runs, counting the answers; the first failure stops
   * the watcher and is kept for the check after the case.
   */
  @BeforeEach
  void watchResponsiveness() {
    watching.set(true);
    watcher =
        new Thread(
            () -> {
              try {
                while (watching.get()) {
                  service.listRuns(new RunQuery(5, 0, null, null));
                  listRunsAnswers.incrementAndGet();
                  Thread.sleep(50);
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } catch (Throwable t) {
                listRunsFailure.set(t);
              }
            },
            "list-runs-watcher");
    watcher.start();
  }

  @AfterEach
  void serverStayedResponsive_andStillRunsCode() throws Exception {
    // A case quicker than the watcher's first call still needs one answer, right after it.
    Await.until("list_runs answered at least once", listRunsAnswers::get, n -> n > 0);
    watching.set(false);
    watcher.join(WATCHER_STOP_MILLIS);
    assertThat(watcher.isAlive())
        .as("list_runs still had not answered %d ms after the case ended", WATCHER_STOP_MILLIS)
        .isFalse();
    assertThat(listRunsFailure.get()).as("list_runs failed while the case ran").isNull();
    assertThat(listRunsAnswers.get()).as("list_runs answers while the case ran").isPositive();
    String id = service.createSession(null, null).sessionId();
    try {
      RunRecord r = service.run(new ExecutionRequest("print(6 * 7)", id, null, 20));
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout()).isEqualTo("42\n");
    } finally {
      service.closeSession(id);
    }
  }

  // -- helpers -----------------------------------------------------------------------------------

  /** Python: {@code t(name, fn)} prints "name ALLOWED", or "name DENIED" when fn raises OSError. */
  private static final String TRY =
      "def t(name, fn):\n"
          + "    try:\n        fn()\n        print(name, 'ALLOWED')\n"
          + "    except OSError:\n        print(name, 'DENIED')\n";

  private static RunRecord oneShot(String code, int timeoutSeconds) {
    return service.run(new ExecutionRequest(code, null, null, timeoutSeconds));
  }

  private static RunRecord inSession(String session, String code, int timeoutSeconds) {
    return service.run(new ExecutionRequest(code, session, null, timeoutSeconds));
  }

  private static String session(LimitRequest limits) {
    return service.createSession(null, null, limits).sessionId();
  }

  private static void assertStopped(RunRecord r, RunStatus status, String reason) {
    assertThat(r.status()).as(r.message()).isEqualTo(status);
    assertThat(r.killReason() == null ? null : r.killReason().wireName())
        .as(r.message())
        .isEqualTo(reason);
    assertThat(r.message()).isNotBlank();
  }

  /** No host process whose command line holds the marker, within a few seconds. */
  private static void assertNoProcessWith(String marker) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!ProcessTable.withCommandLineContaining(marker).isEmpty()
        && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(ProcessTable.withCommandLineContaining(marker))
        .as("processes left behind with " + marker)
        .isEmpty();
  }

  /**
   * No cgroup is left for a sandbox that is gone: at most one per open session and pooled sandbox
   * (this JVM runs one server at a time).
   */
  private static void assertNoCgroupLeft() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    List<Path> left;
    int live;
    do {
      left = sandboxCgroups("memory");
      live = 1 + service.listSessions().size();
      if (left.size() <= live) {
        return;
      }
      Thread.sleep(50);
    } while (System.nanoTime() < deadline);
    assertThat(left).as("cgroups of sandboxes no longer running").hasSizeLessThanOrEqualTo(live);
  }

  /**
   * The sandbox groups under the groups of this data directory's servers in one controller's
   * hierarchy (other servers on the host, and what crashed ones left, are not this test's).
   */
  static List<Path> sandboxCgroups(String controller) throws IOException {
    Path base = ownCgroup(controller);
    String scope = "pysandbox-" + new dev.pysandbox.config.DataLayout(dataDir).identity() + "-";
    List<Path> out = new java.util.ArrayList<>();
    try (Stream<Path> servers = Files.list(base)) {
      for (Path server : servers.toList()) {
        String name = server.getFileName().toString();
        if (name.startsWith(scope)) {
          try (Stream<Path> groups = Files.list(server)) {
            groups.filter(Files::isDirectory).forEach(out::add);
          }
        }
      }
    }
    return out;
  }

  /**
   * The cgroup directory under which this process's server makes its groups: its group in the v1
   * hierarchy of {@code controller} when the host has one (v1, or hybrid with the controller on
   * v1), else its group in the v2 unified hierarchy ({@code 0::/path}). On v2 the server has moved
   * this process into a leaf {@code pysandbox-server-*} below that group, so the leaf's parent is
   * meant.
   */
  static Path ownCgroup(String controller) throws IOException {
    return ownCgroup(controller, Files.readAllLines(Path.of("/proc/self/cgroup")));
  }

  static Path ownCgroup(String controller, List<String> procSelfCgroup) {
    String unified = null;
    for (String line : procSelfCgroup) {
      String[] f = line.split(":", 3);
      if (f.length < 3) {
        continue;
      }
      if (List.of(f[1].split(",")).contains(controller)) {
        return Path.of("/sys/fs/cgroup", controller, f[2].substring(1));
      }
      if (f[0].equals("0") && f[1].isEmpty()) {
        unified = f[2];
      }
    }
    if (unified == null) {
      throw new IllegalStateException("no " + controller + " cgroup hierarchy on this host");
    }
    Path group = Path.of("/sys/fs/cgroup", unified.substring(1));
    Path leaf = group.getFileName();
    return leaf != null && leaf.toString().startsWith("pysandbox-server-")
        ? group.getParent()
        : group;
  }

  @Test
  void ownCgroup_readsV1LinesAndTheV2UnifiedLine() {
    assertThat(ownCgroup("memory", List.of("4:memory:/a/b", "0::/")))
        .isEqualTo(Path.of("/sys/fs/cgroup/memory/a/b"));
    assertThat(ownCgroup("memory", List.of("5:cpu,cpuacct:/x", "4:memory:/", "0::/u")))
        .isEqualTo(Path.of("/sys/fs/cgroup/memory"));
    assertThat(ownCgroup("memory", List.of("0::/user.slice/app.scope")))
        .isEqualTo(Path.of("/sys/fs/cgroup/user.slice/app.scope"));
    assertThat(ownCgroup("memory", List.of("0::/app.scope/pysandbox-server-abc-0badc0de")))
        .isEqualTo(Path.of("/sys/fs/cgroup/app.scope"));
  }

  // -- memory ------------------------------------------------------------------------------------

  @Test
  void memory_hugeAllocations_failWithMemoryLimit() {
    for (String code : List.of("x = bytearray(10**11)", "x = 'a' * 10**10")) {
      RunRecord r = oneShot(code, 20);
      assertStopped(r, RunStatus.FAILED, "memory_limit");
      assertThat(r.message()).contains("512 MiB");
      assertThat(r.error().name()).isEqualTo("MemoryError");
    }
  }

  @Test
  void memory_growingList_isKilledByTheKernel_atTheSessionsLimit() throws Exception {
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
    assertNoCgroupLeft();
  }

  // -- processes ---------------------------------------------------------------------------------

  @Test
  void processes_forkBomb_isBoundedByThePidsLimit_andNothingSurvives() throws Exception {
    String id = session(new LimitRequest(null, 32, null, null));
    RunRecord r = inSession(id, "import os\nwhile True:\n    os.fork()", 30);
    assertStopped(r, RunStatus.FAILED, "pids_limit");
    assertThat(r.message()).contains("32 processes");
    service.closeSession(id);
    assertNoCgroupLeft();
  }

  // -- time --------------------------------------------------------------------------------------

  @Test
  void time_busyLoop_longCCall_ignoredSigterm_caughtSigint_allTimeOut() {
    for (String code :
        List.of(
            "while True: pass",
            "x = 10**10**8",
            "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: time.sleep(1)",
            "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except KeyboardInterrupt:\n        pass")) {
      long t = System.nanoTime();
      RunRecord r = oneShot(code, 2);
      assertStopped(r, RunStatus.TIMED_OUT, "timeout");
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t))
          .as("killed soon after the limit: " + code)
          .isLessThan(6000);
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
  void time_sessionTimeout_killsTheSessionsSandbox_andItsCgroup() throws Exception {
    String id = session(LimitRequest.DEFAULTS);
    RunRecord r = inSession(id, "while True: pass", 1);
    assertStopped(r, RunStatus.TIMED_OUT, "timeout");
    assertThat(r.cpuMillis()).as("CPU time measured by the server").isGreaterThan(500);
    service.closeSession(id);
    assertNoCgroupLeft();
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
                + "print(open('/proc/self/mountinfo').read())\nprint(open('/proc/self/cgroup').read())",
            20);
    String out = proc.stdout();
    String environ = out.substring(0, out.indexOf("---"));
    for (String key : System.getenv().keySet()) {
      if (!key.equals("PATH") && !key.equals("LC_CTYPE")) {
        assertThat(environ).as("server variable " + key).doesNotContain(key + "=");
      }
    }
    String mounts = out.substring(out.indexOf("---"));
    assertThat(mounts)
        .as("nothing of the data directory but the sandbox's own files")
        .doesNotContain("pysandbox.db")
        .doesNotContain(dataDir.resolve("runs").toString())
        .doesNotContain(dataDir.resolve("instances").toString());
    assertThat(mounts)
        .as("the cgroup namespace hides the host's paths")
        .doesNotContain("pysandbox-");
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
    String id = session(LimitRequest.DEFAULTS);
    try {
      RunRecord r =
          inSession(
              id,
              "import os, pathlib\n"
                  + TRY
                  + "t('passwd', lambda: open('/etc/passwd', 'a'))\n"
                  + "t('root', lambda: list(pathlib.Path('/root').iterdir()))\n"
                  + "t('hardlink', lambda: os.link('/etc/passwd', '/mnt/data/passwd'))\n"
                  + "t('hardlink-usr', lambda: os.link('/usr/bin/python3', '/mnt/data/py'))\n"
                  + "os.symlink('"
                  + dataDir.resolve("pysandbox.db")
                  + "', '/mnt/data/db')\n"
                  + "os.symlink('/etc/shadow', '/mnt/data/shadow')\n"
                  + "t('through-link', lambda: open('/mnt/data/db', 'rb').read())\n",
              20);
      assertThat(r.stdout())
          .isEqualTo(
              "passwd DENIED\nroot DENIED\nhardlink DENIED\nhardlink-usr DENIED\n"
                  + "through-link DENIED\n");
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
}

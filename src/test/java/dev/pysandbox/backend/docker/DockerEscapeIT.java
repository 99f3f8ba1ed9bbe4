package dev.pysandbox.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Docker;
import dev.pysandbox.TestEngine;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.core.DefaultSandboxService;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A subset of the escape suite ({@code EscapeSuiteTest}) on the docker backend, through the whole
 * service, on a real engine: memory, a fork bomb, timeouts, detached children, the network and the
 * host's files. After each case a fresh session still runs code, and no container of this data
 * directory is left but the open sessions' and the pool's.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Docker
class DockerEscapeIT {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;
  static DockerEngine engine;
  static com.sun.net.httpserver.HttpServer origin;

  /** Python: {@code t(name, fn)} prints "name ALLOWED", or "name DENIED" when fn raises OSError. */
  private static final String TRY =
      "def t(name, fn):\n"
          + "    try:\n        fn()\n        print(name, 'ALLOWED')\n"
          + "    except OSError:\n        print(name, 'DENIED')\n";

  @BeforeAll
  @Timeout(
      value = 900,
      unit = TimeUnit.SECONDS) // the first test of a clean machine builds the image
  static void start() {
    TestEngine e = TestEngine.get();
    try {
      origin =
          com.sun.net.httpserver.HttpServer.create(
              new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    } catch (java.io.IOException ex) {
      throw new java.io.UncheckedIOException(ex);
    }
    origin.createContext(
        "/",
        exchange -> {
          byte[] body = "from the origin".getBytes(java.nio.charset.StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    origin.start();
    Map<String, String> settings = new HashMap<>();
    settings.put("tiers_allowed", "basic,network");
    settings.put("network_allow", "127.0.0.1:" + origin.getAddress().getPort());
    settings.put("network_allow_private", "true");
    settings.put("backend", "docker");
    settings.put("docker_host", e.dockerHost());
    settings.put("docker_image", e.image());
    settings.put("pool_size", "1");
    settings.put("cancel_grace", "1");
    service = TestServices.start(dataDir, TestServices.withoutImportPolicy(dataDir, settings));
    engine = new DockerEngine(e.dockerHost(), 4);
  }

  @AfterAll
  static void stop() {
    if (service != null) {
      service.close();
    }
    if (origin != null) {
      origin.stop(0);
    }
    if (engine != null) {
      assertThat(containers()).as("containers left after the server closed").isZero();
      engine.close();
    }
  }

  @AfterEach
  void freshSessionStillRuns_andNoContainerIsLeft() throws Exception {
    String id = service.createSession(null, null).sessionId();
    try {
      RunRecord r = service.run(new ExecutionRequest("print(6 * 7)", id, null, 20));
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout()).isEqualTo("42\n");
    } finally {
      service.closeSession(id);
    }
    // Every case closes its sessions; a killed container is removed in the background.
    assertThat(service.listSessions()).isEmpty();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<String> names = containerNames();
    while (names.size() > 1 && System.nanoTime() < deadline) {
      Thread.sleep(100);
      names = containerNames();
    }
    assertThat(names).as("containers: only the pool's").hasSizeLessThanOrEqualTo(1);
  }

  private static List<String> containerNames() {
    String identity = new dev.pysandbox.config.DataLayout(dataDir).identity();
    return engine.withLabels(Map.of(DockerBackend.LABEL_DATA_DIR, identity)).stream()
        .map(c -> c.getLabels().get(DockerBackend.LABEL_SANDBOX) + " " + c.getState())
        .toList();
  }

  private static int containers() {
    String identity = new dev.pysandbox.config.DataLayout(dataDir).identity();
    return engine.withLabels(Map.of(DockerBackend.LABEL_DATA_DIR, identity)).size();
  }

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

  @Test
  void memory_growingList_isKilledByTheKernel_atTheSessionsLimit_andSaysSo() {
    String id = session(new LimitRequest(128, null, null, null));
    RunRecord r = inSession(id, "x = []\nwhile True:\n    x.append(b'1' * 10**6)", 30);
    assertStopped(r, RunStatus.FAILED, "memory_limit");
    assertThat(r.message()).contains("128 MiB");
    assertThat(r.peakMemoryBytes()).isGreaterThan(100L << 20);
    assertThat(service.listSessions())
        .filteredOn(s -> s.sessionId().equals(id))
        .singleElement()
        .satisfies(s -> assertThat(s.deadReason()).startsWith("memory_limit"));
    service.closeSession(id);
  }

  @Test
  void memory_hugeAllocation_failsOnTheMemoryLimit() {
    RunRecord r = oneShot("x = bytearray(10**11)", 20);
    assertStopped(r, RunStatus.FAILED, "memory_limit");
  }

  @Test
  void processes_forkBomb_isBoundedByThePidsLimit() {
    String id = session(new LimitRequest(null, 32, null, null));
    RunRecord r = inSession(id, "import os\nwhile True:\n    os.fork()", 30);
    assertStopped(r, RunStatus.FAILED, "pids_limit");
    assertThat(r.message()).contains("32 processes");
    service.closeSession(id);
  }

  @Test
  void time_busyLoop_andIgnoredSignals_timeOut() {
    for (String code :
        List.of(
            "while True: pass",
            "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                + "while True: time.sleep(1)")) {
      long t = System.nanoTime();
      RunRecord r = oneShot(code, 2);
      assertStopped(r, RunStatus.TIMED_OUT, "timeout");
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t))
          .as("killed soon after the limit: " + code)
          .isLessThan(8000);
    }
  }

  @Test
  void time_detachedGrandchildren_dieWithTheContainer() throws Exception {
    String marker = "grandchild-" + UUID.randomUUID();
    RunRecord r =
        oneShot(
            "import subprocess, time\n"
                + "for _ in range(3):\n"
                + "    subprocess.Popen(['sh', '-c', 'sleep 600; echo "
                + marker
                + "'], start_new_session=True)\n"
                + "time.sleep(600)",
            2);
    assertStopped(r, RunStatus.TIMED_OUT, "timeout");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!ProcessTable.withCommandLineContaining(marker).isEmpty()
        && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(ProcessTable.withCommandLineContaining(marker)).as("left behind").isEmpty();
  }

  @Test
  void network_noWayOut() throws Exception {
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      RunRecord r =
          oneShot(
              "import socket, urllib.request\n"
                  + TRY
                  + "t('urlopen', lambda: urllib.request.urlopen('http://1.1.1.1', timeout=5))\n"
                  + "t('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW,"
                  + " socket.IPPROTO_ICMP))\n"
                  + "t('host', lambda: socket.create_connection(('127.0.0.1', "
                  + listener.getLocalPort()
                  + "), timeout=3))\n"
                  + "t('netlink', lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))\n"
                  + "t('inet6', lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))\n"
                  + "t('unix', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))\n"
                  + "print(open('/proc/self/status').read().count('Seccomp:\\t2'))\n",
              30);
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout())
          .as("as on bwrap: the seccomp profile is the bwrap filter's rules")
          .isEqualTo(
              "urlopen DENIED\nraw DENIED\nhost DENIED\nnetlink DENIED\ninet6 DENIED\n"
                  + "unix ALLOWED\n1\n");
    }
  }

  @Test
  void files_hostFilesStayOutOfReach() throws Exception {
    Files.writeString(dataDir.resolve("secret.txt"), "host secret");
    String id = session(LimitRequest.DEFAULTS);
    try {
      RunRecord r =
          inSession(
              id,
              "import os\n"
                  + TRY
                  + "t('passwd', lambda: open('/etc/passwd', 'a'))\n"
                  + "t('root-fs', lambda: open('/usr/x', 'w'))\n"
                  + "t('data-dir', lambda: open('"
                  + dataDir.resolve("secret.txt")
                  + "').read())\n"
                  + "t('host-root', lambda: os.listdir('/root'))\n"
                  + "print(os.getuid(), sorted(os.listdir('/mnt/data')))\n",
              20);
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout())
          .isEqualTo("passwd DENIED\nroot-fs DENIED\ndata-dir DENIED\nhost-root DENIED\n1000 []\n");
    } finally {
      service.closeSession(id);
    }
  }

  @Test
  void files_andVariables_surviveBetweenCalls_andUploadsReachTheCode() throws Exception {
    String id = session(LimitRequest.DEFAULTS);
    try {
      inSession(id, "x = 41\nopen('/mnt/data/f.txt', 'w').write('kept')", 20);
      RunRecord r = inSession(id, "print(x + 1, open('f.txt').read())", 20);
      assertThat(r.stdout()).isEqualTo("42 kept\n");
    } finally {
      service.closeSession(id);
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
}

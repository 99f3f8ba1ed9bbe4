package dev.pysandbox.bench;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.RuntimeInfo;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.backend.bwrap.SandboxFlags;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The two sandbox backends side by side ({@code BENCH_ONLY=backends}, issue 17): two in-process
 * services in one JVM, one with {@code backend=bwrap} and one with {@code backend=docker} on the
 * engine that {@code DOCKER_HOST} (or {@code -Dbench.dockerHost}) names, and a third with {@code
 * docker_runtime=runsc} when a trial container with that runtime really runs under gVisor. For
 * each: {@code create_session} from the warm pool, {@code create_session} with limits the pool does
 * not hold (a sandbox start on the path), the first run in a fresh session, {@code close_session},
 * a one-shot run from the warm pool, a warm {@code print(1)} in a session, and the memory an idle
 * session costs on the host. Baselines from the same run: a bare {@code python3 -c pass}, {@code
 * bwrap} with the sandbox's flags around it, and {@code docker run --rm IMAGE python3 -c pass}
 * through the Engine API.
 *
 * <p>Before every timed call that takes a sandbox, each service is left to settle: its pool full,
 * no sandbox beyond the pool and its open sessions still alive or being removed, and no engine
 * clean-up process running, so that what is timed is the call and not a refill or a removal in the
 * background.
 *
 * <p>Memory, counted the same way for both: a sandbox's host processes are the tree under its
 * per-sandbox monitor on the host, the outer {@code bwrap} process (a child of the server's
 * launcher) or the container's {@code conmon} ({@code containerd-shim} on Docker), monitor
 * included; their PSS and RSS are summed ({@code /proc/PID/smaps_rollup}, {@code
 * /proc/PID/status}). Second measure: the memory cgroup of the sandbox's innermost process (the
 * bwrap sandbox's own group, the container's group), its anonymous memory and page cache from
 * {@code memory.stat}, plus the PSS of the sandbox's processes outside that group (conmon). Shared
 * helpers are not per sandbox and are shown apart: the growth of the launcher (bwrap) or of the
 * engine's service process (docker) while the idle sessions were opened, divided by their number.
 */
final class BackendsBench {
  private static final String LABEL_DATA_DIR = "dev.pysandbox.data-dir";
  private static final long SETTLE_TIMEOUT_MILLIS = 60_000;

  private BackendsBench() {}

  /** One backend under test: a service and what finds its sandboxes on the host. */
  private static final class Column {
    final String name;
    final PysandboxConfig config;
    final DefaultSandboxService service;
    final Path dataDir;
    final boolean docker;
    final Map<String, List<Double>> ms = new LinkedHashMap<>();
    final Map<String, String> memory = new LinkedHashMap<>();
    String oneSandbox = "";
    int openSessions;

    Column(String name, PysandboxConfig config, DefaultSandboxService service, boolean docker) {
      this.name = name;
      this.config = config;
      this.service = service;
      this.dataDir = config.dataDir();
      this.docker = docker;
    }

    void add(String what, double millis) {
      ms.computeIfAbsent(what, k -> new ArrayList<>()).add(millis);
    }
  }

  static void run(Path dataDir, int runs, int warmCalls, int idleSessions) throws Exception {
    long began = System.nanoTime();
    // Sessions opened and closed by the hundred: their INFO lines would bury the table.
    ((ch.qos.logback.classic.Logger)
            org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME))
        .setLevel(ch.qos.logback.classic.Level.WARN);
    String host = System.getProperty("bench.dockerHost", "");
    if (host.isBlank()) {
      host = System.getenv().getOrDefault("DOCKER_HOST", "");
    }
    if (host.isBlank()) {
      throw new IllegalStateException(
          "BENCH_ONLY=backends needs a container engine and none is given: start one with"
              + " 'eval \"$(scripts/podman-service.sh start /tmp/benchpod)\"' (it prints"
              + " export DOCKER_HOST=unix:///tmp/benchpod/podman.sock), import the image with"
              + " 'scripts/build-image.sh', and run again with DOCKER_HOST set (or"
              + " BENCH_DOCKER_HOST=unix:///…); stop it after with"
              + " 'scripts/podman-service.sh stop /tmp/benchpod'");
    }
    String image = System.getProperty("bench.dockerImage", "");
    Map<String, String> common = new HashMap<>();
    common.put("max_sessions", Integer.toString(idleSessions + 5));
    Map<String, String> dockerSettings = new HashMap<>(common);
    dockerSettings.put("backend", "docker");
    dockerSettings.put("docker_host", host);
    if (!image.isBlank()) {
      dockerSettings.put("docker_image", image);
    }
    Map<String, String> bwrapSettings = new HashMap<>(common);
    bwrapSettings.put("backend", "bwrap");

    List<Column> columns = new ArrayList<>();
    // Podman's Docker API ignores a container's runtime: gVisor needs a service whose default is
    // runsc (PYSANDBOX_PODMAN_RUNTIME=runsc scripts/podman-service.sh start DIR).
    String gvisorHost = System.getProperty("bench.gvisorHost", "");
    try (DockerClient engine = engine(host);
        DockerClient gvisorEngine = gvisorHost.isBlank() ? engine(host) : engine(gvisorHost)) {
      columns.add(start("bwrap", dataDir.resolve("backends-bwrap"), bwrapSettings, false));
      columns.add(start("docker", dataDir.resolve("backends-docker"), dockerSettings, true));
      String imageName = columns.get(1).config.dockerImage();
      String engineName =
          String.valueOf(
              ((Map<?, ?>) columns.get(1).service.checkSetup().limits().get("confinement"))
                  .get("engine"));
      System.out.printf(
          "%n== backends: bwrap vs docker (%s, image %s) — %d runs each, %d warm calls, %d idle"
              + " sessions ==%n",
          engineName, imageName, runs, warmCalls, idleSessions);
      String skipped = runscTrial(gvisorEngine, imageName);
      if (skipped == null) {
        Map<String, String> runscSettings = new HashMap<>(dockerSettings);
        runscSettings.put("docker_runtime", "runsc");
        if (!gvisorHost.isBlank()) {
          runscSettings.put("docker_host", gvisorHost);
        }
        try {
          columns.add(start("runsc", dataDir.resolve("backends-runsc"), runscSettings, true));
          System.out.println("runsc (gVisor): a trial container ran under gVisor; third column");
        } catch (IllegalStateException e) {
          skipped = "a trial container ran under gVisor, but " + e.getMessage();
        }
      }
      if (skipped != null) {
        System.out.println("runsc (gVisor): skipped — " + skipped);
      }
      measure(columns, runs, warmCalls, idleSessions, engine);
      printTable(columns);
      System.out.println();
      baselines(dataDir, engine, columns.size() > 2 ? gvisorEngine : null, imageName, runs);
    } finally {
      for (Column c : columns) {
        c.service.close();
      }
    }
    System.out.printf(
        Locale.ROOT, "(backends bench took %.0f s)%n", (System.nanoTime() - began) / 1e9);
  }

  private static Column start(String name, Path dir, Map<String, String> settings, boolean docker)
      throws IOException {
    Files.createDirectories(dir);
    PysandboxConfig config = TestServices.config(dir, settings);
    DefaultSandboxService service = Assembly.start(config);
    service.awaitStarted();
    SetupReport r = service.checkSetup();
    if (!r.ready()) {
      service.close();
      throw new IllegalStateException(name + " backend is not ready: " + r.problems());
    }
    return new Column(name, config, service, docker);
  }

  private static DockerClient engine(String host) {
    DefaultDockerClientConfig config =
        DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(host).build();
    ApacheDockerHttpClient http =
        new ApacheDockerHttpClient.Builder()
            .dockerHost(URI.create(host))
            .connectionTimeout(Duration.ofSeconds(5))
            .responseTimeout(Duration.ofSeconds(60))
            .build();
    return DockerClientImpl.getInstance(config, http);
  }

  // -- runsc
  // ---------------------------------------------------------------------------------------

  /**
   * Null when a container with runtime runsc really runs under gVisor (its kernel is not the
   * host's), else why the runsc column is skipped. Podman's Docker-compatible API lists runsc among
   * its runtimes but may not pass {@code HostConfig.Runtime} on, so the container's own {@code
   * /proc/version} decides, not the engine's answer.
   */
  private static String runscTrial(DockerClient engine, String image) {
    Map<String, RuntimeInfo> runtimes = engine.infoCmd().exec().getRuntimes();
    if (runtimes == null || !runtimes.containsKey("runsc")) {
      return "the engine has no runtime named runsc (it lists "
          + (runtimes == null ? "none" : runtimes.keySet())
          + ")";
    }
    String id = null;
    try {
      id =
          engine
              .createContainerCmd(image)
              .withCmd("python3", "-c", "print(open('/proc/version').read().strip())")
              .withHostConfig(
                  HostConfig.newHostConfig().withNetworkMode("none").withRuntime("runsc"))
              .exec()
              .getId();
      String asked = engine.inspectContainerCmd(id).exec().getHostConfig().getRuntime();
      engine.startContainerCmd(id).exec();
      Integer code = engine.waitContainerCmd(id).start().awaitStatusCode(60, TimeUnit.SECONDS);
      String printed = logs(engine, id).strip();
      if (code == null || code != 0) {
        return "a trial container with runtime runsc failed (exit " + code + "): " + printed;
      }
      String hostKernel = Files.readString(Path.of("/proc/version")).strip();
      if (printed.equals(hostKernel)) {
        return "the engine lists runsc ("
            + runtimes.get("runsc").getPath()
            + ") and accepted a container with runtime runsc, but the container ran on the host's"
            + " kernel, not gVisor's (its /proc/version is the host's; the engine reports its"
            + " runtime as '"
            + asked
            + "'): this engine does not pass HostConfig.Runtime on, so docker_runtime=runsc gets"
            + " its default runtime here";
      }
      return null;
    } catch (IOException | RuntimeException e) {
      return "a trial container with runtime runsc did not start: " + e.getMessage();
    } finally {
      if (id != null) {
        removeQuietly(engine, id);
      }
    }
  }

  private static String logs(DockerClient engine, String id) {
    StringBuilder out = new StringBuilder();
    try {
      engine
          .logContainerCmd(id)
          .withStdOut(true)
          .withStdErr(true)
          .exec(
              new ResultCallback.Adapter<Frame>() {
                @Override
                public void onNext(Frame frame) {
                  synchronized (out) {
                    out.append(new String(frame.getPayload(), StandardCharsets.UTF_8));
                  }
                }
              })
          .awaitCompletion(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (out) {
      return out.toString();
    }
  }

  private static void removeQuietly(DockerClient engine, String id) {
    try {
      engine.removeContainerCmd(id).withForce(true).exec();
    } catch (RuntimeException e) {
      // already gone
    }
  }

  // -- the measurements
  // ----------------------------------------------------------------------------

  private static final String CREATE = "create_session, from the warm pool";
  private static final String FIRST = "first run_python print(1) in that fresh session";
  private static final String CLOSE = "close_session";
  private static final String COLD = "create_session, limits the pool lacks (a sandbox start)";
  private static final String ONE_SHOT = "one-shot print(1), pool refilled before each";
  private static final String WARM = "warm print(1) in a session";

  private static void measure(
      List<Column> columns, int runs, int warmCalls, int idleSessions, DockerClient engine)
      throws Exception {
    // create_session from the pool, the first run in it, close_session; backend by backend, every
    // service settled before each create.
    for (Column c : columns) {
      for (int i = 0; i < runs + 2; i++) {
        settle(columns, engine);
        String id = "create-" + i;
        long t0 = System.nanoTime();
        c.service.createSession(id, null);
        long t1 = System.nanoTime();
        require(c.service.run(new ExecutionRequest("print(1)", id, null, null)));
        long t2 = System.nanoTime();
        c.service.closeSession(id);
        long t3 = System.nanoTime();
        if (i >= 2) { // the first two warm the JIT and the engine's caches
          c.add(CREATE, (t1 - t0) / 1e6);
          c.add(FIRST, (t2 - t1) / 1e6);
          c.add(CLOSE, (t3 - t2) / 1e6);
        }
      }
    }
    // A session whose limits are not the pool's waits for a sandbox of its own.
    for (Column c : columns) {
      int pids = c.config.defaultLimits().pids();
      LimitRequest other =
          new LimitRequest(null, Math.max(LimitRequest.MIN_PIDS, pids - 1), null, null);
      for (int i = 0; i < runs + 1; i++) {
        settle(columns, engine);
        String id = "cold-" + i;
        long t0 = System.nanoTime();
        c.service.createSession(id, null, other, null);
        long took = System.nanoTime() - t0;
        c.service.closeSession(id);
        if (i >= 1) {
          c.add(COLD, took / 1e6);
        }
      }
    }
    // One-shot runs, each from a full pool.
    for (Column c : columns) {
      for (int i = 0; i < runs + 2; i++) {
        settle(columns, engine);
        long t0 = System.nanoTime();
        require(c.service.run(new ExecutionRequest("print(1)", null, null, null)));
        if (i >= 2) {
          c.add(ONE_SHOT, (System.nanoTime() - t0) / 1e6);
        }
      }
    }
    // Warm runs, in alternating blocks so that the machine's drift hits every backend alike.
    settle(columns, engine);
    for (Column c : columns) {
      c.service.createSession("warm", null);
      for (int i = 0; i < 100; i++) {
        require(c.service.run(new ExecutionRequest("print(1)", "warm", null, null)));
      }
    }
    int blocks = 10;
    int perBlock = Math.max(1, warmCalls / blocks);
    for (int b = 0; b < blocks; b++) {
      for (Column c : columns) {
        for (int i = 0; i < perBlock; i++) {
          long t0 = System.nanoTime();
          require(c.service.run(new ExecutionRequest("print(1)", "warm", null, null)));
          c.add(WARM, (System.nanoTime() - t0) / 1e6);
        }
      }
    }
    for (Column c : columns) {
      c.service.closeSession("warm");
    }
    // Idle sessions.
    for (Column c : columns) {
      idleMemory(c, columns, idleSessions, engine);
    }
  }

  private static void require(RunRecord r) {
    if (r.status() != RunStatus.SUCCEEDED) {
      throw new IllegalStateException(r.status() + ": " + r.message() + " " + r.stderr());
    }
  }

  /**
   * Waits until every service has its pool full and no sandbox beyond the pool and its open
   * sessions, and no engine clean-up process runs; warns (once per call) after a minute.
   */
  private static void settle(List<Column> columns, DockerClient engine) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_TIMEOUT_MILLIS);
    while (true) {
      Map<Long, Proc> procs = Proc.all();
      boolean quiet = procs.values().stream().noneMatch(p -> p.cmd.contains("container cleanup"));
      for (Column c : columns) {
        if (!quiet) {
          break;
        }
        Object ready = c.service.checkSetup().pool().get("ready");
        int size = c.config.poolSize();
        quiet =
            ready instanceof Number n
                && n.intValue() >= size
                && sandboxRoots(c, procs, engine, true).size() == size + c.openSessions;
      }
      if (quiet) {
        return;
      }
      if (System.nanoTime() > deadline) {
        System.out.println("  (warning: the services did not settle within a minute; going on)");
        return;
      }
      sleep(50);
    }
  }

  // -- memory per idle session
  // ---------------------------------------------------------------------

  private static void idleMemory(Column c, List<Column> columns, int sessions, DockerClient engine)
      throws Exception {
    settle(columns, engine);
    Map<Long, Proc> before = Proc.all();
    long helper = sharedHelper(c, before);
    long helperBefore = helper > 0 ? before.get(helper).pssKb() : 0;
    for (int i = 0; i < sessions; i++) {
      c.service.createSession("idle-" + i, null);
      c.openSessions++;
    }
    settle(columns, engine);
    // Idle: the sandboxes' processes together use under 20 ms of CPU in a second (most 15 s).
    Map<Long, Proc> procs = Proc.all();
    long idleAfter = System.nanoTime();
    for (int i = 0; i < 15; i++) {
      Map<Long, Proc> a = Proc.all();
      long ticksA = ticks(c, a, engine);
      sleep(1000);
      procs = Proc.all();
      if (ticks(c, procs, engine) - ticksA <= 2) {
        break;
      }
    }
    double idleSeconds = (System.nanoTime() - idleAfter) / 1e9;
    Map<Long, Long> roots = sandboxRoots(c, procs, engine, false);
    Map<Long, List<Long>> children = children(procs);
    long pss = 0;
    long rss = 0;
    long monitorPss = 0;
    long processes = 0;
    long anon = 0;
    long cache = 0;
    long outside = 0;
    for (long root : roots.keySet()) {
      List<Long> tree = subtree(root, children);
      long deepest = deepest(root, children);
      String group = procs.get(deepest).memoryCgroup();
      if (c.oneSandbox.isEmpty()) {
        List<String> each = new ArrayList<>();
        for (long pid : tree) {
          Proc p = procs.get(pid);
          String what = "";
          if (p.comm.startsWith("python")) { // bwrap's arguments name the runner too
            what =
                p.cmd.contains("/init.py")
                    ? " init.py"
                    : p.cmd.contains("/runner.py") ? " runner.py" : "";
          }
          each.add(p.comm + what + " " + mb(p.pssKb()));
        }
        c.oneSandbox = String.join(", ", each) + " (cgroup " + group + ")";
      }
      processes += tree.size();
      monitorPss += procs.get(root).pssKb();
      for (long pid : tree) {
        Proc p = procs.get(pid);
        long kb = p.pssKb();
        pss += kb;
        rss += p.rssKb();
        if (!group.equals(p.memoryCgroup())) {
          outside += kb;
        }
      }
      long[] stat = cgroupMemory(group);
      anon += stat[0];
      cache += stat[1];
    }
    int n = Math.max(1, roots.size());
    Map<Long, Proc> after = Proc.all();
    long helperAfter = helper > 0 && after.containsKey(helper) ? after.get(helper).pssKb() : 0;
    c.memory.put("sandboxes measured (idle sessions + pool)", Integer.toString(roots.size()));
    c.memory.put("host processes per sandbox", fmt(processes / (double) n, 1));
    c.memory.put("PSS of a sandbox's host processes (MB)", mb(pss / (double) n));
    c.memory.put("  of which its monitor: outer bwrap / conmon (MB)", mb(monitorPss / (double) n));
    c.memory.put("RSS of a sandbox's host processes (MB)", mb(rss / (double) n));
    c.memory.put("cgroup: anonymous memory (MB)", mb(anon / 1024.0 / n));
    c.memory.put("cgroup: page cache (MB)", mb(cache / 1024.0 / n));
    c.memory.put(
        "cgroup anon + cache + PSS outside the cgroup (MB)",
        mb((anon + cache) / 1024.0 / n + outside / (double) n));
    c.memory.put(
        "shared: launcher / engine service PSS growth per session (MB)",
        helper > 0 ? mb((helperAfter - helperBefore) / (double) sessions) : "n/a");
    c.memory.put("waited for idle (s)", fmt(idleSeconds, 1));
    for (int i = 0; i < sessions; i++) {
      c.service.closeSession("idle-" + i);
      c.openSessions--;
    }
  }

  private static long ticks(Column c, Map<Long, Proc> procs, DockerClient engine) {
    Map<Long, List<Long>> children = children(procs);
    long sum = 0;
    for (long root : sandboxRoots(c, procs, engine, false).keySet()) {
      for (long pid : subtree(root, children)) {
        sum += procs.get(pid).ticks;
      }
    }
    return sum;
  }

  /**
   * The per-sandbox monitors on the host, each the root of its sandbox's process tree: the
   * launcher's children (bwrap), or each container's conmon or containerd-shim (docker), to the
   * depth of their tree. With {@code countGone}, a container that exists but has no process any
   * more (being removed) counts too, as -1 - its index.
   */
  private static Map<Long, Long> sandboxRoots(
      Column c, Map<Long, Proc> procs, DockerClient engine, boolean countGone) {
    Map<Long, Long> roots = new LinkedHashMap<>();
    if (!c.docker) {
      long launcher = launcher(c, procs);
      for (Proc p : procs.values()) {
        if (p.ppid == launcher && launcher > 0) {
          roots.put(p.pid, p.pid);
        }
      }
      return roots;
    }
    String identity = new DataLayout(c.dataDir).identity();
    List<Container> containers =
        engine
            .listContainersCmd()
            .withShowAll(true)
            .withLabelFilter(Map.of(LABEL_DATA_DIR, identity))
            .exec();
    long gone = -1;
    for (Container container : containers) {
      long root = -1;
      if ("running".equals(container.getState())) {
        try {
          Long pid = engine.inspectContainerCmd(container.getId()).exec().getState().getPidLong();
          root = pid == null ? -1 : monitorOf(pid, procs);
        } catch (RuntimeException e) {
          root = -1;
        }
      }
      if (root > 0) {
        roots.put(root, root);
      } else if (countGone) {
        roots.put(gone, gone);
        gone--;
      }
    }
    return roots;
  }

  /** The container's conmon or containerd-shim above its init, else the init itself. */
  private static long monitorOf(long init, Map<Long, Proc> procs) {
    long p = init;
    while (p > 1 && procs.containsKey(p)) {
      String comm = procs.get(p).comm;
      if (comm.equals("conmon") || comm.startsWith("containerd-shim")) {
        return p;
      }
      p = procs.get(p).ppid;
    }
    return init;
  }

  /** The bwrap service's launcher: a child of this JVM started from its data directory. */
  private static long launcher(Column c, Map<Long, Proc> procs) {
    long self = ProcessHandle.current().pid();
    String dir = c.dataDir.toString();
    for (Proc p : procs.values()) {
      if (p.ppid == self && p.cmd.contains(dir)) {
        return p.pid;
      }
    }
    return -1;
  }

  /** The launcher (bwrap) or the engine's service process (docker), or -1. */
  private static long sharedHelper(Column c, Map<Long, Proc> procs) {
    if (!c.docker) {
      return launcher(c, procs);
    }
    String socket = c.config.dockerHost().substring("unix://".length());
    for (Proc p : procs.values()) {
      if ((p.cmd.contains("system service") && p.cmd.contains(socket))
          || p.comm.equals("dockerd")) {
        return p.pid;
      }
    }
    return -1;
  }

  private static Map<Long, List<Long>> children(Map<Long, Proc> procs) {
    Map<Long, List<Long>> out = new HashMap<>();
    for (Proc p : procs.values()) {
      out.computeIfAbsent(p.ppid, k -> new ArrayList<>()).add(p.pid);
    }
    return out;
  }

  private static List<Long> subtree(long root, Map<Long, List<Long>> children) {
    List<Long> out = new ArrayList<>();
    Set<Long> seen = new HashSet<>();
    List<Long> todo = new ArrayList<>(List.of(root));
    while (!todo.isEmpty()) {
      long p = todo.remove(todo.size() - 1);
      if (seen.add(p)) {
        out.add(p);
        todo.addAll(children.getOrDefault(p, List.of()));
      }
    }
    return out;
  }

  private static long deepest(long root, Map<Long, List<Long>> children) {
    long best = root;
    List<Long> level = List.of(root);
    while (!level.isEmpty()) {
      best = level.get(0);
      List<Long> next = new ArrayList<>();
      for (long p : level) {
        next.addAll(children.getOrDefault(p, List.of()));
      }
      level = next;
    }
    return best;
  }

  /**
   * Anonymous memory and page cache in bytes of a memory cgroup, from memory.stat (cgroup v1's
   * total_rss and total_cache, v2's anon and file).
   */
  private static long[] cgroupMemory(String group) {
    Path v1 = Path.of("/sys/fs/cgroup/memory" + group, "memory.stat");
    Path v2 = Path.of("/sys/fs/cgroup" + group, "memory.stat");
    boolean isV1 = Files.exists(v1);
    Map<String, Long> stat = new HashMap<>();
    try {
      for (String line : Files.readAllLines(isV1 ? v1 : v2)) {
        String[] f = line.split(" ");
        if (f.length == 2) {
          stat.put(f[0], Long.parseLong(f[1]));
        }
      }
    } catch (IOException | NumberFormatException e) {
      return new long[] {0, 0};
    }
    return isV1
        ? new long[] {stat.getOrDefault("total_rss", 0L), stat.getOrDefault("total_cache", 0L)}
        : new long[] {stat.getOrDefault("anon", 0L), stat.getOrDefault("file", 0L)};
  }

  /** A process as /proc shows it. */
  private record Proc(long pid, long ppid, String comm, String cmd, long ticks) {
    static Map<Long, Proc> all() {
      Map<Long, Proc> out = new HashMap<>();
      try (var dirs = Files.list(Path.of("/proc"))) {
        for (Path d : dirs.toList()) {
          String name = d.getFileName().toString();
          if (name.isEmpty() || !name.chars().allMatch(Character::isDigit)) {
            continue;
          }
          try {
            String stat = Files.readString(d.resolve("stat"));
            String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            String cmd =
                new String(Files.readAllBytes(d.resolve("cmdline")), StandardCharsets.UTF_8)
                    .replace('\0', ' ');
            long pid = Long.parseLong(name);
            out.put(
                pid,
                new Proc(
                    pid,
                    Long.parseLong(f[1]),
                    comm,
                    cmd,
                    Long.parseLong(f[11]) + Long.parseLong(f[12])));
          } catch (IOException | RuntimeException e) {
            // gone
          }
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot list /proc", e);
      }
      return out;
    }

    long pssKb() {
      return kb(Path.of("/proc/" + pid + "/smaps_rollup"), "Pss:");
    }

    long rssKb() {
      return kb(Path.of("/proc/" + pid + "/status"), "VmRSS:");
    }

    /** Its memory cgroup's path (v1's memory hierarchy, else v2's), or "". */
    String memoryCgroup() {
      String v2 = "";
      try {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/cgroup"))) {
          String[] f = line.split(":", 3);
          if (f.length == 3 && List.of(f[1].split(",")).contains("memory")) {
            return f[2];
          }
          if (f.length == 3 && f[0].equals("0")) {
            v2 = f[2];
          }
        }
      } catch (IOException e) {
        // gone
      }
      return v2;
    }

    private static long kb(Path file, String key) {
      try {
        for (String line : Files.readAllLines(file)) {
          if (line.startsWith(key)) {
            return Long.parseLong(line.substring(key.length()).trim().split("\\s+")[0]);
          }
        }
      } catch (IOException | NumberFormatException e) {
        // gone
      }
      return 0;
    }
  }

  // -- baselines
  // -----------------------------------------------------------------------------------

  private static void baselines(
      Path dataDir, DockerClient engine, DockerClient gvisorEngine, String image, int runs)
      throws Exception {
    System.out.println("baselines, same run:");
    Benchmark.row(
        "  python3 -c pass (no sandbox, " + runs + " starts)",
        Benchmark.spawn(List.of("/usr/bin/python3", "-c", "pass"), runs));
    List<String> bwrap = new ArrayList<>(SandboxFlags.forBaseline(dataDir));
    bwrap.addAll(List.of("/usr/bin/python3", "-c", "pass"));
    Benchmark.row("  bwrap (the sandbox's flags) + python3 -c pass", Benchmark.spawn(bwrap, runs));
    int containers = Math.max(5, runs / 2);
    Benchmark.row(
        "  docker run --rm IMAGE python3 -c pass (API, " + containers + " runs)",
        dockerRun(engine, image, null, containers));
    if (gvisorEngine != null) {
      Benchmark.row(
          "  same, runtime runsc (API, " + containers + " runs)",
          dockerRun(gvisorEngine, image, "runsc", containers));
    }
  }

  /**
   * What {@code docker run --rm --network none IMAGE python3 -c pass} asks of the engine: create,
   * start, wait for the exit, remove; after two untimed runs.
   */
  private static List<Double> dockerRun(
      DockerClient engine, String image, String runtime, int runs) {
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < runs + 2; i++) {
      HostConfig hc = HostConfig.newHostConfig().withNetworkMode("none");
      if (runtime != null) {
        hc = hc.withRuntime(runtime);
      }
      long t0 = System.nanoTime();
      String id =
          engine
              .createContainerCmd(image)
              .withCmd("python3", "-c", "pass")
              .withHostConfig(hc)
              .exec()
              .getId();
      engine.startContainerCmd(id).exec();
      Integer code = engine.waitContainerCmd(id).start().awaitStatusCode(60, TimeUnit.SECONDS);
      engine.removeContainerCmd(id).withForce(true).exec();
      if (code == null || code != 0) {
        throw new IllegalStateException("docker run baseline: exit " + code);
      }
      if (i >= 2) {
        ms.add((System.nanoTime() - t0) / 1e6);
      }
    }
    return ms;
  }

  // -- printing
  // ------------------------------------------------------------------------------------

  private static void printTable(List<Column> columns) {
    StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%n%-58s", "ms, p50 / p99"));
    for (Column c : columns) {
      head.append(String.format(Locale.ROOT, " %21s", c.name));
    }
    if (columns.size() > 1) {
      head.append(String.format(Locale.ROOT, " %16s", columns.get(1).name + "-bwrap p50"));
    }
    System.out.println(head);
    for (String what : columns.get(0).ms.keySet()) {
      int n = columns.get(0).ms.get(what).size();
      StringBuilder line =
          new StringBuilder(String.format(Locale.ROOT, "%-58s", what + " (" + n + ")"));
      List<Double> p50 = new ArrayList<>();
      for (Column c : columns) {
        List<Double> s = new ArrayList<>(c.ms.getOrDefault(what, List.of()));
        if (s.isEmpty()) {
          line.append(String.format(Locale.ROOT, " %21s", "-"));
          p50.add(Double.NaN);
          continue;
        }
        Collections.sort(s);
        p50.add(Benchmark.pct(s, 50));
        line.append(
            String.format(
                Locale.ROOT, " %9.2f / %-9.2f", Benchmark.pct(s, 50), Benchmark.pct(s, 99)));
      }
      if (columns.size() > 1) {
        line.append(String.format(Locale.ROOT, " %+16.2f", p50.get(1) - p50.get(0)));
      }
      System.out.println(line);
    }
    StringBuilder mhead =
        new StringBuilder(String.format(Locale.ROOT, "%n%-58s", "memory per idle session"));
    for (Column c : columns) {
      mhead.append(String.format(Locale.ROOT, " %21s", c.name));
    }
    System.out.println(mhead);
    List<String> keys = new ArrayList<>();
    for (Column c : columns) {
      for (String k : c.memory.keySet()) {
        if (!keys.contains(k)) {
          keys.add(k);
        }
      }
    }
    for (String k : keys) {
      StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-58s", k));
      for (Column c : columns) {
        line.append(String.format(Locale.ROOT, " %21s", c.memory.getOrDefault(k, "-")));
      }
      System.out.println(line);
    }
    System.out.println("one sandbox's host processes, PSS in MB:");
    for (Column c : columns) {
      System.out.printf("  %-7s %s%n", c.name + ":", c.oneSandbox);
    }
  }

  private static String mb(double kb) {
    return fmt(kb / 1024.0, 1);
  }

  private static String fmt(double v, int decimals) {
    return String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}

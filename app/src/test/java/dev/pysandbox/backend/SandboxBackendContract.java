package dev.pysandbox.backend;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.Await;
import dev.pysandbox.api.Limits;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.worker.WorkerHub;
import dev.pysandbox.worker.WorkerReply;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * What every {@link SandboxBackend} must do, through the SPI and the worker protocol only; each
 * backend's test extends this (as {@code RunStoreContract} is for stores) and runs it on the real
 * thing: start and ready, run, interrupt, kill leaves nothing, limits, workspace files, orphan
 * reaping, many sandboxes at once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class SandboxBackendContract {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The instance id of the backend most tests use: a live server's. */
  protected static final String INSTANCE = "c0ffee01";

  protected SandboxBackend backend;

  /** Runs the backends' blocking parts; shut down after them. */
  protected final ExecutorService executor = Executors.newCachedThreadPool();

  private final List<SandboxBackend> backends = new ArrayList<>();
  private final List<WorkerHub> hubs = new ArrayList<>();
  private final List<Sandbox> started = new ArrayList<>();

  /**
   * A new backend over one data directory shared by every call of one test class, as a server
   * process with this instance id would have it (several may live at once, as servers sharing a
   * data directory do). The contract closes it.
   */
  protected abstract SandboxBackend newBackend(String instanceId) throws Exception;

  /** The limits a sandbox gets when a test does not say. */
  protected abstract Limits defaultLimits();

  @BeforeAll
  void openBackend() throws Exception {
    backend = backend(INSTANCE);
    assertThat(backend.unavailableReason()).as("this backend works here").isEmpty();
  }

  @AfterEach
  void killSandboxes() throws Exception {
    for (Sandbox s : started) {
      s.kill("test over").get(10, TimeUnit.SECONDS);
      s.releaseWorkspace();
    }
    started.clear();
  }

  @AfterAll
  void closeBackends() {
    backends.forEach(SandboxBackend::close);
    hubs.forEach(WorkerHub::close);
    executor.shutdownNow();
  }

  /**
   * A worker hub for a backend of server instance {@code instanceId}, closed after the backends.
   */
  protected WorkerHub hub(DataLayout layout, String instanceId) throws IOException {
    WorkerHub hub = WorkerHub.open(layout.runtimeDir().resolve("contract-" + instanceId + ".sock"));
    hubs.add(hub);
    return hub;
  }

  private SandboxBackend backend(String instanceId) throws Exception {
    SandboxBackend b = newBackend(instanceId);
    backends.add(b);
    return b;
  }

  protected Sandbox start(SandboxBackend on, Limits limits) throws Exception {
    Sandbox s =
        on.start(new SandboxSpec(List.of(), 1 << 20, limits, 64L << 20)).get(30, TimeUnit.SECONDS);
    started.add(s);
    return s;
  }

  protected Sandbox start() throws Exception {
    return start(backend, defaultLimits());
  }

  protected static CompletableFuture<WorkerReply> send(Sandbox s, String code) {
    ObjectNode payload = JSON.createObjectNode().put("code", code);
    return s.worker().request("exec", payload);
  }

  protected static WorkerReply exec(Sandbox s, String code) throws Exception {
    return send(s, code).get(30, TimeUnit.SECONDS);
  }

  protected static String result(WorkerReply r) {
    return r.frame().path("result").path("text/plain").asText();
  }

  @Test
  void start_givesAReadySandbox_withAnIdNamingItsServer_andItsLimits() throws Exception {
    Sandbox s = start();
    assertThat(SandboxIds.instanceOf(s.id())).isEqualTo(INSTANCE);
    assertThat(s.limits()).isEqualTo(defaultLimits());
    assertThat(s.worker().ready()).isCompleted();
    assertThat(s.exited()).isNotDone();
    assertThat(backend.interpreter()).isPresent();
    assertThat(backend.confinement()).isPresent();
    assertThat(backend.sandboxUsers()).isPresent();
    assertThat(backend.attempts()).last().extracting(BackendAttempt::works).isEqualTo(true);
  }

  @Test
  void exec_runsCodeThroughTheWorkerProtocol_andKeepsItsGlobals() throws Exception {
    Sandbox s = start();
    WorkerReply r = exec(s, "import sys\nx = 6\nprint('hello', file=sys.stdout)\nx * 7");
    assertThat(r.frame().path("status").asText()).isEqualTo("ok");
    assertThat(r.stdout().text()).isEqualTo("hello\n");
    assertThat(result(r)).isEqualTo("42");
    assertThat(result(exec(s, "x + 1"))).isEqualTo("7");
    WorkerReply failed = exec(s, "1 / 0");
    assertThat(failed.frame().path("error").path("name").asText()).isEqualTo("ZeroDivisionError");
  }

  @Test
  void interrupt_stopsTheRunningCode_andTheSandboxServesOn() throws Exception {
    Sandbox s = start();
    CompletableFuture<WorkerReply> pending =
        send(s, "import time\nprint('sleeping', flush=True)\ntime.sleep(30)");
    Await.until(
        "the code's output 'sleeping' (it runs)",
        () -> s.worker().partial().stdout().text(),
        out -> out.contains("sleeping"));
    s.worker().interrupt();
    WorkerReply r = pending.get(10, TimeUnit.SECONDS);
    assertThat(r.frame().path("error").path("name").asText()).isEqualTo("KeyboardInterrupt");
    assertThat(result(exec(s, "'still here'"))).isEqualTo("'still here'");
  }

  @Test
  void kill_leavesNoProcess_evenADetachedChild() throws Exception {
    Sandbox s = start();
    exec(
        s,
        "import subprocess\n"
            + "subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
            + "subprocess.Popen(['sh', '-c', 'sleep 600 & sleep 600'])");
    send(s, "while True:\n    pass");
    KillReport report = s.kill("contract").get(10, TimeUnit.SECONDS);
    assertThat(report.leftBehind()).as("processes left after the kill").isZero();
    SandboxExit exit = s.exited().get(10, TimeUnit.SECONDS);
    assertThat(exit.killedByServer()).isTrue();
    assertThat(s.kill("again").get(10, TimeUnit.SECONDS)).isSameAs(report);
  }

  @Test
  void memoryLimit_stopsARunThatPassesIt_andSaysSo() throws Exception {
    Limits d = defaultLimits();
    Sandbox s =
        start(backend, new Limits(128L << 20, d.pids(), d.cpus(), d.diskBytes(), d.tmpBytes()));
    ResourceUsage before = s.usage().orElse(null);
    CompletableFuture<WorkerReply> run =
        send(s, "b = bytearray(512 << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1");
    String memoryError = null;
    try {
      memoryError = run.get(30, TimeUnit.SECONDS).frame().path("error").path("name").asText();
    } catch (ExecutionException lost) {
      // The kernel killed the runner: the sandbox is gone.
      s.exited().get(10, TimeUnit.SECONDS);
    }
    ResourceUsage after = s.usage().orElse(null);
    boolean oomKilled = before != null && after != null && after.oomKills() > before.oomKills();
    assertThat("MemoryError".equals(memoryError) || oomKilled)
        .as("a MemoryError (rlimit) or an OOM kill the usage counts (cgroup); got " + memoryError)
        .isTrue();
  }

  /**
   * Issue 24 item 11: /dev/shm was the /dev tmpfs of bwrap, bounded by nothing but memory (400 MiB
   * written against tmp_size_mb=256). Both memory-backed places stop at the sandbox's tmp size.
   */
  @Test
  void tmpAndDevShm_stopAtTheTmpSize() throws Exception {
    Limits d = defaultLimits();
    Sandbox s =
        start(backend, new Limits(d.memoryBytes(), d.pids(), d.cpus(), d.diskBytes(), 16L << 20));
    for (String dir : List.of("/dev/shm", "/tmp")) {
      WorkerReply r =
          exec(
              s,
              "import errno\n"
                  + "n, err = 0, None\n"
                  + "try:\n"
                  + "    with open('"
                  + dir
                  + "/fill', 'wb') as f:\n"
                  + "        for i in range(64):\n"
                  + "            f.write(b'x' * (1 << 20))\n"
                  + "            f.flush()\n"
                  + "            n += 1\n"
                  + "except OSError as e:\n"
                  + "    err = e.errno\n"
                  + "import os\n"
                  + "os.unlink('"
                  + dir
                  + "/fill')\n"
                  + "(n, err)");
      String got = result(r);
      assertThat(got).as(dir + ": MiB written, errno (ENOSPC)").endsWith(", 28)");
      assertThat(Integer.parseInt(got.substring(1, got.indexOf(','))))
          .as(dir + ": MiB written")
          .isLessThanOrEqualTo(16);
    }
    // /dev itself takes no file (bwrap's /dev was a tmpfs of the sandbox's own, unbounded), while
    // its device nodes still work.
    String dev =
        result(
            exec(
                s,
                "import errno\n"
                    + "try:\n"
                    + "    open('/dev/fill', 'wb').close()\n"
                    + "    e = None\n"
                    + "except OSError as x:\n"
                    + "    e = x.errno\n"
                    + "open('/dev/null', 'wb').write(b'x')\n"
                    + "(e in (errno.EROFS, errno.EACCES), len(open('/dev/urandom', 'rb').read(4)))"));
    assertThat(dev).isEqualTo("(True, 4)");
  }

  @Test
  protected void pidsLimit_stopsForking_andTheUsageCountsIt() throws Exception {
    Limits d = defaultLimits();
    Sandbox s =
        start(backend, new Limits(d.memoryBytes(), 32, d.cpus(), d.diskBytes(), d.tmpBytes()));
    ResourceUsage before = s.usage().orElse(null);
    WorkerReply r =
        exec(
            s,
            "import os, time\n"
                + "kids, err = [], None\n"
                + "try:\n"
                + "    for i in range(200):\n"
                + "        pid = os.fork()\n"
                + "        if pid == 0:\n"
                + "            time.sleep(60)\n"
                + "            os._exit(0)\n"
                + "        kids.append(pid)\n"
                + "except OSError as e:\n"
                + "    err = e.errno\n"
                + "for k in kids:\n"
                + "    os.kill(k, 9)\n"
                + "    os.waitpid(k, 0)\n"
                + "(len(kids), err)");
    String got = result(r);
    assertThat(got).as("forks made, errno (EAGAIN)").endsWith(", 11)");
    int forks = Integer.parseInt(got.substring(1, got.indexOf(',')));
    assertThat(forks).isLessThan(32);
    ResourceUsage after = s.usage().orElse(null);
    if (before != null && after != null) {
      assertThat(after.pidsLimitHits()).isGreaterThan(before.pidsLimitHits());
    }
    assertThat(result(exec(s, "'serves on'"))).isEqualTo("'serves on'");
  }

  @Test
  void workspace_isTheCodesMntData_seenByTheServerBothWays() throws Exception {
    Sandbox s = start();
    Files.writeString(s.workspace().resolve("in.txt"), "from the server");
    WorkerReply r =
        exec(
            s,
            "import os\n"
                + "open('/mnt/data/out.txt', 'w').write('from the code')\n"
                + "open('/mnt/data/in.txt').read()");
    assertThat(result(r)).isEqualTo("'from the server'");
    assertThat(s.workspace().resolve("out.txt")).hasContent("from the code");
    s.kill("contract").get(10, TimeUnit.SECONDS);
    assertThat(s.workspace().resolve("out.txt"))
        .as("the files outlive the sandbox until released")
        .hasContent("from the code");
  }

  @Test
  void reapOrphans_killsADeadServersSandbox_andLeavesALiveOnesAlone() throws Exception {
    String dead = "dead0001";
    String live = "1ive0002";
    Sandbox orphan = start(backend(dead), defaultLimits());
    Sandbox alive = start(backend(live), defaultLimits());
    Sandbox own = start();
    int killed = backend.reapOrphans(id -> id.equals(INSTANCE) || id.equals(live));
    assertThat(killed).as("sandboxes' processes killed").isPositive();
    orphan.exited().get(10, TimeUnit.SECONDS);
    assertThat(result(exec(alive, "'alive'"))).isEqualTo("'alive'");
    assertThat(result(exec(own, "'own'"))).isEqualTo("'own'");
    assertThat(alive.exited()).isNotDone();
  }

  /**
   * What the backend's host still holds of server instance {@code instanceId} once its backend is
   * closed (containers an engine lists, say); empty when the backend leaves nothing to look at.
   */
  protected List<String> leftOf(String instanceId) throws Exception {
    return List.of();
  }

  @Test
  void close_whileSandboxesAreStarting_endsEveryOneOfThem() throws Exception {
    String instance = "c105ed03";
    SandboxBackend closing = backend(instance);
    List<CompletableFuture<Sandbox>> starting = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      starting.add(closing.start(new SandboxSpec(List.of(), 1 << 20, defaultLimits(), 64L << 20)));
    }
    closing.close();
    for (CompletableFuture<Sandbox> f : starting) {
      Sandbox s;
      try {
        s = f.get(60, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        continue; // refused or cut off by the close: nothing of it may be left, checked below
      }
      assertThat(s.exited())
          .as("sandbox %s, started while its backend closed, has ended", s.id())
          .succeedsWithin(Duration.ofSeconds(30));
    }
    assertThat(leftOf(instance)).as("what the closed backend left on the host").isEmpty();
    assertThat(closing.start(new SandboxSpec(List.of(), 1 << 20, defaultLimits(), 64L << 20)))
        .as("a closed backend starts nothing")
        .failsWithin(Duration.ofSeconds(5));
  }

  @Test
  void manySandboxesAtOnce_eachRunsItsOwnCode_inItsOwnWorkspace() throws Exception {
    int n = 8;
    List<CompletableFuture<Sandbox>> starting = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      starting.add(backend.start(new SandboxSpec(List.of(), 1 << 20, defaultLimits(), 64L << 20)));
    }
    List<Sandbox> all = new ArrayList<>();
    for (CompletableFuture<Sandbox> f : starting) {
      Sandbox s = f.get(45, TimeUnit.SECONDS);
      started.add(s);
      all.add(s);
    }
    assertThat(all.stream().map(Sandbox::id).distinct()).hasSize(n);
    assertThat(all.stream().map(Sandbox::workspace).distinct()).hasSize(n);
    List<CompletableFuture<WorkerReply>> runs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      runs.add(
          send(
              all.get(i),
              "import os, time\ntime.sleep(0.5)\nopen('/mnt/data/me', 'w').write('"
                  + i
                  + "')\nsorted(os.listdir('/mnt/data'))"));
    }
    for (int i = 0; i < n; i++) {
      assertThat(result(runs.get(i).get(30, TimeUnit.SECONDS))).isEqualTo("['me']");
      assertThat(all.get(i).workspace().resolve("me")).hasContent(Integer.toString(i));
    }
    for (Sandbox s : all) {
      assertThat(s.kill("contract").get(10, TimeUnit.SECONDS).leftBehind()).isZero();
    }
  }
}

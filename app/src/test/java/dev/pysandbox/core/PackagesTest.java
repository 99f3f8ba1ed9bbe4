package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.packages.SimpleIndex;
import dev.pysandbox.packages.TinyWheels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Packages in real sandboxes, installed by real pip from a PEP 503 index served by the test on
 * loopback (reached only through the egress proxy), offline.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Sandboxed
class PackagesTest {
  @TempDir static Path dataDir;
  @TempDir static Path wheels;
  SimpleIndex index;
  DefaultSandboxService service;

  @BeforeAll
  void start() throws Exception {
    TinyWheels.build(wheels, "tinypkg", "1.0");
    TinyWheels.build(wheels, "tinypkg", "2.0");
    index = SimpleIndex.serve(wheels);
    service =
        TestServices.start(
            dataDir,
            Map.of(
                "pool_size",
                "1",
                "max_sessions",
                "6",
                "index_url",
                index.url().toString(),
                "network_allow_private",
                "true"));
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
    if (index != null) {
      index.close();
    }
  }

  private RunRecord run(String code, String session, List<String> packages) {
    return service.run(new ExecutionRequest(code, session, null, 120, null, null, false, packages));
  }

  @Test
  void aOneShotRun_getsItsPackage_fromTheIndex_andRecordsItsEnvironment() {
    RunRecord r = run("import tinypkg; print(tinypkg.hello())", null, List.of("tinypkg==1.0"));
    assertThat(r.status()).as(r.stderr() + r.message()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).contains(TinyWheels.greeting("tinypkg", "1.0"));
    RunRecord stored = service.getRun(r.runId(), true);
    assertThat(stored.packages()).containsExactly("tinypkg==1.0");
    assertThat(stored.environment()).hasSize(32);
    assertThat(stored.pipFreeze()).contains("tinypkg==1.0");
  }

  @Test
  void twoSessions_withTwoVersions_runSideBySide_andAreFixedForTheirLife() {
    service.createSession("pk_one", null, LimitRequest.DEFAULTS, null, List.of("tinypkg==1.0"));
    service.createSession("pk_two", null, LimitRequest.DEFAULTS, null, List.of("TinyPkg == 2.0"));
    try {
      assertThat(run("import tinypkg; print(tinypkg.hello())", "pk_one", List.of()).stdout())
          .contains(TinyWheels.greeting("tinypkg", "1.0"));
      assertThat(run("import tinypkg; print(tinypkg.hello())", "pk_two", List.of()).stdout())
          .contains(TinyWheels.greeting("tinypkg", "2.0"));
      // The session's own packages may be named again; others are refused, naming them.
      assertThat(run("print(1)", "pk_one", List.of("tinypkg==1.0")).status())
          .isEqualTo(RunStatus.SUCCEEDED);
      assertThatThrownBy(() -> run("print(1)", "pk_one", List.of("tinypkg==2.0")))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("tinypkg==2.0")
          .hasMessageContaining("fixed when it was created");
      assertThat(
              service.listSessions().stream()
                  .filter(x -> x.sessionId().equals("pk_two"))
                  .findFirst()
                  .orElseThrow()
                  .packages())
          .containsExactly("tinypkg==2.0");
      // The environment is read-only inside, and its packages come before the system's.
      RunRecord w =
          run(
              "import tinypkg, os\n"
                  + "print(tinypkg.__file__)\n"
                  + "open(os.path.join(os.path.dirname(tinypkg.__file__), 'x.py'), 'w')",
              "pk_two",
              List.of());
      assertThat(w.stdout()).contains("/opt/pysandbox/env/");
      assertThat(w.error().value()).contains("Read-only file system");
    } finally {
      service.closeSession("pk_one");
      service.closeSession("pk_two");
    }
  }

  @Test
  void pep723Metadata_inTheCode_isInstalled_withoutAPackagesArgument() {
    RunRecord r =
        run(
            "# /// script\n# dependencies = [\"tinypkg==2.0\"]\n# ///\n"
                + "import tinypkg\nprint(tinypkg.hello())",
            null,
            List.of());
    assertThat(r.status()).as(r.stderr()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).contains(TinyWheels.greeting("tinypkg", "2.0"));
    assertThatThrownBy(
            () ->
                run(
                    "# /// script\n# dependencies = [\"../x.whl\"]\n# ///\nprint(1)",
                    null,
                    List.of()))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("../x.whl");
  }

  @Test
  void injectionAttempts_areRefusedAtTheEdge_namingTheSpec() {
    for (String spec :
        List.of(
            "numpy; os.system('x')",
            "--index-url=http://evil",
            "../x.whl",
            "git+https://github.com/x/y",
            "tinypkg @ https://x/y.whl",
            "-e .",
            "tinypkg\nrequests")) {
      assertThatThrownBy(() -> run("print(1)", null, List.of(spec)))
          .as(spec)
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("is refused");
    }
  }

  @Test
  void concurrentRequests_forOneEnvironment_buildItOnce() throws Exception {
    TinyWheels.build(wheels, "oncepkg", "1.0");
    int before = index.requests("/files/oncepkg");
    var pool = java.util.concurrent.Executors.newFixedThreadPool(3);
    try {
      List<java.util.concurrent.Future<RunRecord>> runs = new java.util.ArrayList<>();
      for (int i = 0; i < 3; i++) {
        runs.add(
            pool.submit(
                () -> run("import oncepkg; print(oncepkg.hello())", null, List.of("oncepkg"))));
      }
      for (var f : runs) {
        assertThat(f.get(150, TimeUnit.SECONDS).stdout())
            .contains(TinyWheels.greeting("oncepkg", "1.0"));
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(index.requests("/files/oncepkg") - before).isEqualTo(1);
    assertThat(service.listEnvironments().environments())
        .filteredOn(e -> e.requirements().equals(List.of("oncepkg")))
        .singleElement()
        .satisfies(e -> assertThat(e.runs()).isEqualTo(3));
  }

  @Test
  void aPackageTheIndexLacks_isEnvironmentFailed_withPipsWords_andLeavesNothing() throws Exception {
    assertThatThrownBy(() -> run("print(1)", null, List.of("nosuchpkg==1.0")))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.ENVIRONMENT_FAILED);
              assertThat(e.retryable()).isFalse();
            })
        .hasMessageContaining("nosuchpkg");
    assertThat(leftovers()).isEmpty();
  }

  @Test
  void anUnreachableIndex_isEnvironmentFailed_retryable() {
    index.unavailable(true);
    try {
      assertThatThrownBy(() -> run("print(1)", null, List.of("tinypkg==1.0,!=1.5")))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.ENVIRONMENT_FAILED);
                assertThat(e.retryable()).as(e.getMessage()).isTrue();
              });
    } finally {
      index.unavailable(false);
    }
  }

  @Test
  void aBasicSandbox_hasNoWayOut_neitherProxyNorIndex() {
    String port = Integer.toString(index.url().getPort());
    RunRecord r =
        run(
            "import os\n"
                + "print('sock', os.path.exists('/run/pysandbox/egress.sock'))\n"
                + "print('proxy', os.environ.get('HTTP_PROXY'))\n"
                + "import subprocess, sys\n"
                + "code = 'import socket\\n"
                + "for p in (3128, "
                + port
                + "):\\n"
                + "    s = socket.socket()\\n"
                + "    s.settimeout(3)\\n"
                + "    try:\\n"
                + "        s.connect((\\'127.0.0.1\\', p)); print(p, \\'open\\')\\n"
                + "    except OSError as e:\\n"
                + "        print(p, type(e).__name__)'\n"
                + "print(subprocess.run([sys.executable, '-c', code], capture_output=True,"
                + " text=True).stdout)",
            null,
            List.of());
    assertThat(r.stdout()).contains("sock False").contains("proxy None");
    assertThat(r.stdout()).doesNotContain("open");
  }

  @Test
  void theBuild_isToldToTheCallersListener_beforeTheRunStarts() throws Exception {
    TinyWheels.build(wheels, "toldpkg", "1.0");
    List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
    RunRecord r =
        service.run(
            new ExecutionRequest(
                "import toldpkg", null, null, 120, null, null, false, List.of("toldpkg==1.0")),
            new dev.pysandbox.api.RunListener() {
              @Override
              public void started(String runId) {
                order.add("started");
              }

              @Override
              public void preparing(String line) {
                lines.add(line);
                if (!order.contains("preparing")) {
                  order.add("preparing");
                }
              }
            });
    assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(lines).anyMatch(l -> l.contains("building environment"));
    assertThat(lines).anyMatch(l -> l.contains("toldpkg"));
    assertThat(order).containsExactly("preparing", "started");
  }

  private List<Path> leftovers() throws java.io.IOException {
    Path envs = dataDir.resolve("sandbox/envs");
    try (var s = Files.list(envs)) {
      return s.filter(p -> p.getFileName().toString().startsWith(".build-")).toList();
    }
  }

  static ErrorCode codeOf(Throwable e) {
    return e instanceof PysandboxException p ? p.code() : null;
  }
}

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
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Environment builds with other package sources and limits, each with a server of its own: a
 * wheelhouse alone ({@code --no-index}), a build killed by {@code env_build_timeout} leaving
 * nothing, environments listed and cleaned (never one in use).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Sandboxed
class EnvironmentBuildsTest {
  @TempDir Path dataDir;
  @TempDir Path wheels;

  private static RunRecord run(DefaultSandboxService s, String code, List<String> packages) {
    return s.run(new ExecutionRequest(code, null, null, 120, null, null, false, packages));
  }

  /**
   * A server with no warm pool that builds from {@code index} (on loopback, so private addresses
   * are allowed), with {@code more} settings (key, value, ...).
   */
  private DefaultSandboxService startWith(SimpleIndex index, String... more) {
    Map<String, String> settings = new java.util.HashMap<>();
    settings.put("pool_size", "0");
    settings.put("index_url", index.url().toString());
    settings.put("network_allow_private", "true");
    for (int i = 0; i + 1 < more.length; i += 2) {
      settings.put(more[i], more[i + 1]);
    }
    return TestServices.start(dataDir, settings);
  }

  /** Sandboxes run as other host users: the wheelhouse must be theirs to read. */
  private void readableWheelhouse() throws Exception {
    Files.setPosixFilePermissions(wheels, PosixFilePermissions.fromString("rwxr-xr-x"));
    try (Stream<Path> s = Files.list(wheels)) {
      for (Path p : s.toList()) {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-r--r--"));
      }
    }
  }

  @Test
  void aWheelhouseAlone_buildsWithNoIndex() throws Exception {
    TinyWheels.build(wheels, "tinypkg", "1.0");
    TinyWheels.build(wheels, "deppkg", "1.0", null, List.of("tinypkg"));
    readableWheelhouse();
    try (DefaultSandboxService s =
        TestServices.start(
            dataDir, Map.of("pool_size", "0", "index_url", "", "find_links", wheels.toString()))) {
      RunRecord r =
          run(s, "import deppkg, tinypkg; print(tinypkg.hello())", List.of("deppkg==1.0"));
      assertThat(r.status()).as(r.stderr()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.stdout()).contains(TinyWheels.greeting("tinypkg", "1.0"));
      assertThat(s.getRun(r.runId(), false).pipFreeze()).contains("deppkg==1.0", "tinypkg==1.0");
    }
  }

  @Test
  void noPackageSource_refusesPackages_sayingWhatToSet() {
    try (DefaultSandboxService s =
        TestServices.start(dataDir, Map.of("pool_size", "0", "index_url", ""))) {
      assertThatThrownBy(() -> run(s, "print(1)", List.of("tinypkg")))
          .satisfies(
              e ->
                  assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("index_url")
          .hasMessageContaining("find_links");
      // Without packages nothing changes.
      assertThat(run(s, "print(1)", List.of()).status()).isEqualTo(RunStatus.SUCCEEDED);
    }
  }

  @Test
  void aBuildPastEnvBuildTimeout_isKilled_andLeavesNothing() throws Exception {
    TinyWheels.build(wheels, "slowpkg", "1.0");
    try (SimpleIndex index = SimpleIndex.serve(wheels)) {
      index.stall(60_000);
      try (DefaultSandboxService s = startWith(index, "env_build_timeout", "10")) {
        // The index stalls for a minute: the build is stopped at its limit, not let finish.
        assertThatThrownBy(() -> run(s, "print(1)", List.of("slowpkg")))
            .isInstanceOfSatisfying(
                PysandboxException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.ENVIRONMENT_FAILED))
            .hasMessageContaining("env_build_timeout");
        Path envs = dataDir.resolve("sandbox/envs");
        try (Stream<Path> left = Files.list(envs)) {
          assertThat(left.map(p -> p.getFileName().toString()))
              .as("a killed build leaves no environment and no temporary directory")
              .allMatch(n -> n.equals(".locks"));
        }
        assertThat(s.listEnvironments().environments()).isEmpty();
      }
    }
  }

  @Test
  void environments_areListed_andCleaned_butNeverOneInUse() throws Exception {
    TinyWheels.build(wheels, "tinypkg", "1.0");
    TinyWheels.build(wheels, "tinypkg", "2.0");
    try (SimpleIndex index = SimpleIndex.serve(wheels);
        DefaultSandboxService s = startWith(index)) {
      assertThat(run(s, "print(1)", List.of("tinypkg==1.0")).status())
          .isEqualTo(RunStatus.SUCCEEDED);
      s.createSession("held", null, LimitRequest.DEFAULTS, null, List.of("tinypkg==2.0"));
      var list = s.listEnvironments();
      assertThat(list.environments()).hasSize(2);
      assertThat(list.environments())
          .allSatisfy(
              e -> {
                assertThat(e.key()).hasSize(32);
                assertThat(e.sizeBytes()).isPositive();
                assertThat(e.pipFreeze()).startsWith("tinypkg==");
              });
      var inUse =
          list.environments().stream()
              .filter(e -> e.requirements().equals(List.of("tinypkg==2.0")))
              .findFirst()
              .orElseThrow();
      assertThat(inUse.inUse()).isTrue();
      var dry = s.cleanEnvironments(0, true);
      assertThat(dry.dryRun()).isTrue();
      assertThat(dry.removed()).hasSize(1).doesNotContain(inUse.key());
      assertThat(dry.keptInUse()).containsExactly(inUse.key());
      assertThat(s.listEnvironments().environments()).hasSize(2);
      var done = s.cleanEnvironments(0, false);
      assertThat(done.removed()).isEqualTo(dry.removed());
      assertThat(done.freedBytes()).isPositive();
      assertThat(s.listEnvironments().environments())
          .extracting(e -> e.key())
          .containsExactly(inUse.key());
      // The session still runs with its environment; a run asking for the removed one rebuilds it.
      assertThat(
              s.run(
                      new ExecutionRequest(
                          "import tinypkg; print(tinypkg.hello())", "held", null, 60))
                  .stdout())
          .contains(TinyWheels.greeting("tinypkg", "2.0"));
      assertThat(run(s, "import tinypkg; print(tinypkg.hello())", List.of("tinypkg==1.0")).stdout())
          .contains(TinyWheels.greeting("tinypkg", "1.0"));
      s.closeSession("held");
    }
  }

  @Test
  void aBuildLargerThanEnvMaxMb_fails_andLeavesNothing() throws Exception {
    // 3 MiB of incompressible text in the module: the wheel stays large, the environment too.
    java.util.Random random = new java.util.Random(7);
    StringBuilder big = new StringBuilder("DATA = '''");
    for (int i = 0; i < 3 * 1024 * 1024; i++) {
      big.append((char) ('a' + random.nextInt(26)));
    }
    big.append("'''\n");
    TinyWheels.build(wheels, "bigpkg", "1.0", big.toString());
    try (SimpleIndex index = SimpleIndex.serve(wheels);
        DefaultSandboxService s = startWith(index, "env_max_mb", "1")) {
      assertThatThrownBy(() -> run(s, "print(1)", List.of("bigpkg")))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.ENVIRONMENT_FAILED);
                assertThat(e.retryable()).isFalse();
              })
          .hasMessageContaining("env_max_mb");
      try (Stream<Path> left = Files.list(dataDir.resolve("sandbox/envs"))) {
        assertThat(left.map(p -> p.getFileName().toString())).allMatch(n -> n.equals(".locks"));
      }
    }
  }

  @Test
  void aRerun_keepsTheOriginalsPackages_orTakesNewOnes() throws Exception {
    TinyWheels.build(wheels, "tinypkg", "1.0");
    TinyWheels.build(wheels, "tinypkg", "2.0");
    try (SimpleIndex index = SimpleIndex.serve(wheels);
        DefaultSandboxService s = startWith(index)) {
      String code = "import tinypkg; print(tinypkg.hello())";
      RunRecord first = run(s, code, List.of("tinypkg==1.0"));
      RunRecord again =
          s.rerun(
              new dev.pysandbox.api.RerunRequest(first.runId(), null, null, null, null),
              dev.pysandbox.api.RunListener.NONE);
      assertThat(again.stdout()).contains(TinyWheels.greeting("tinypkg", "1.0"));
      assertThat(s.getRun(again.runId(), false).environment())
          .isEqualTo(s.getRun(first.runId(), false).environment());
      RunRecord newer =
          s.rerun(
              new dev.pysandbox.api.RerunRequest(
                  first.runId(), null, null, null, null, List.of("tinypkg==2.0")),
              dev.pysandbox.api.RunListener.NONE);
      assertThat(newer.stdout()).contains(TinyWheels.greeting("tinypkg", "2.0"));
      assertThat(s.diffRuns(newer.runId(), first.runId()).summary()).isNotBlank();
    }
  }
}

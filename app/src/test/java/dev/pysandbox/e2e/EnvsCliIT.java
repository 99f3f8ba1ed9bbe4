package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Client;
import dev.pysandbox.packages.SimpleIndex;
import dev.pysandbox.packages.TinyWheels;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pysandbox envs} and {@code pysandbox run -p} as a person at a terminal uses them, from a
 * directory of their own: real pip in a build sandbox installing from a PEP 503 index the test
 * serves on loopback. Each test has its own data directory.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Client
class EnvsCliIT {
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path wheels;
  @TempDir static Path elsewhere;
  static SimpleIndex index;

  @BeforeAll
  static void serveIndex() throws Exception {
    TinyWheels.build(wheels, "tinypkg", "1.0");
    TinyWheels.build(wheels, "tinypkg", "2.0");
    index = SimpleIndex.serve(wheels);
  }

  @AfterAll
  static void stopIndex() {
    if (index != null) {
      index.close();
    }
  }

  /** {@code pysandbox ARGS --set index_url=<the test's index> ... --data-dir D}, from elsewhere. */
  static ServerProcess.Result pysandbox(Path dataDir, String... args) throws Exception {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--set", "index_url=" + index.url(), "--set", "network_allow_private=true"));
    return ServerProcess.runIn(elsewhere, dataDir, null, all.toArray(String[]::new));
  }

  static ServerProcess.Result ok(Path dataDir, String... args) throws Exception {
    ServerProcess.Result r = pysandbox(dataDir, args);
    assertThat(r.exit()).as("%s\n%s\n%s", List.of(args), r.stdout(), r.stderr()).isZero();
    return r;
  }

  @Test
  void envsBuild_showsProgressAndFreeze_list_showsIt_clean_isADryRunUntilYes(@TempDir Path data)
      throws Exception {
    ServerProcess.Result built = ok(data, "envs", "build", "tinypkg==1.0");
    assertThat(built.stderr()).as("progress lines").containsPattern("(?m)^\\[ *\\d+\\.\\ds\\] ");
    assertThat(built.stdout())
        .containsPattern("(?m)^environment [0-9a-f]{32}: .*tinypkg==1\\.0$")
        .contains("tinypkg==1.0\n");
    String key = built.stdout().replaceAll("(?s)^environment ([0-9a-f]{32}):.*", "$1");
    int wheelFetches = index.requests("/files/tinypkg-1.0");

    ServerProcess.Result again = ok(data, "envs", "build", "tinypkg==1.0");
    assertThat(again.stdout()).startsWith("environment " + key + ": ");
    assertThat(index.requests("/files/tinypkg-1.0"))
        .as("an environment that exists is only shown")
        .isEqualTo(wheelFetches);

    ServerProcess.Result list = ok(data, "envs", "list");
    assertThat(list.stdout()).contains(key).contains("tinypkg==1.0").contains("(1 environment,");
    JsonNode listed = JSON.readTree(ok(data, "envs", "list", "--json").stdout());
    assertThat(listed.path("environments")).hasSize(1);
    assertThat(listed.path("environments").get(0).path("key").asText()).isEqualTo(key);
    assertThat(listed.path("environments").get(0).path("pip_freeze").asText())
        .contains("tinypkg==1.0");

    ServerProcess.Result dry = ok(data, "envs", "clean", "--older-than-days", "0");
    assertThat(dry.stdout())
        .startsWith("would remove 1 environments")
        .contains("  " + key)
        .contains("add --yes");
    assertThat(ok(data, "envs", "list").stdout()).as("a dry run removes nothing").contains(key);

    JsonNode removed =
        JSON.readTree(
            ok(data, "envs", "clean", "--older-than-days", "0", "--yes", "--json").stdout());
    assertThat(removed.path("dry_run").asBoolean()).isFalse();
    assertThat(removed.path("removed").toString()).contains(key);
    assertThat(JSON.readTree(ok(data, "envs", "list", "--json").stdout()).path("environments"))
        .isEmpty();
  }

  @Test
  void runWithAPackage_printsItsGreeting(@TempDir Path data) throws Exception {
    ServerProcess.Result r =
        ok(data, "run", "-p", "tinypkg==2.0", "-c", "import tinypkg; print(tinypkg.hello())");
    assertThat(r.stdout()).isEqualTo(TinyWheels.greeting("tinypkg", "2.0") + "\n");
    JsonNode json =
        JSON.readTree(
            ok(data, "run", "--package", "tinypkg==2.0", "--json", "-c", "import tinypkg")
                .stdout());
    assertThat(json.path("packages").toString()).isEqualTo("[\"tinypkg==2.0\"]");
    assertThat(json.path("pip_freeze").asText()).contains("tinypkg==2.0");
    assertThat(ok(data, "envs", "list").stdout()).contains("tinypkg==2.0");
  }

  @Test
  void aRefusedSpec_exits2_andAMissingPackage_exits8_bothSayingWhy(@TempDir Path data)
      throws Exception {
    ServerProcess.Result refused = pysandbox(data, "envs", "build", "numpy; os.system('x')");
    assertThat(refused.exit()).as(refused.stderr()).isEqualTo(2);
    assertThat(refused.stderr())
        .startsWith("pysandbox: invalid_argument: ")
        .contains("numpy; os.system('x')");

    ServerProcess.Result missing =
        pysandbox(data, "run", "-p", "nosuchpkg==1.0", "-c", "print('ran')");
    assertThat(missing.exit()).as(missing.stderr()).isEqualTo(8);
    assertThat(missing.stdout()).doesNotContain("ran");
    assertThat(missing.stderr())
        .contains("pysandbox: environment_failed: ")
        .contains("nosuchpkg")
        .doesNotContain("Exception");
  }

  @Test
  void twoProcesses_buildingOneEnvironment_atOnce_buildItOnce(@TempDir Path data) throws Exception {
    TinyWheels.build(wheels, "twopkg", "1.0");
    int before = index.requests("/files/twopkg");
    var pool = java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      var a = pool.submit(() -> pysandbox(data, "envs", "build", "twopkg==1.0", "--json"));
      var b = pool.submit(() -> pysandbox(data, "envs", "build", "twopkg==1.0", "--json"));
      ServerProcess.Result ra = a.get(240, TimeUnit.SECONDS);
      ServerProcess.Result rb = b.get(240, TimeUnit.SECONDS);
      assertThat(ra.exit()).as(ra.stderr()).isZero();
      assertThat(rb.exit()).as(rb.stderr()).isZero();
      String keyA = JSON.readTree(ra.stdout()).path("key").asText();
      assertThat(JSON.readTree(rb.stdout()).path("key").asText()).isEqualTo(keyA).hasSize(32);
    } finally {
      pool.shutdownNow();
    }
    assertThat(index.requests("/files/twopkg") - before)
        .as("two servers sharing the data directory built it once")
        .isEqualTo(1);
  }
}

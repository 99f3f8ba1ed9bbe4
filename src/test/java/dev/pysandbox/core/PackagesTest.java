package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.packages.SimpleIndex;
import dev.pysandbox.packages.TinyWheels;
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
}

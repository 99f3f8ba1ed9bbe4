package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 item 9: each run kept a full copy of every file it changed, so one tenant's runs could
 * fill the data directory. {@code tenant_storage_max_mb} bounds what all of a tenant's runs keep;
 * past it the run is still recorded and each file left out says why; another tenant is not touched,
 * and deleting a run frees its room. Real bwrap sandboxes, real SQLite.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class TenantStorageTest {
  @TempDir Path dataDir;

  private static ExecutionRequest write(String name, int kib) {
    return new ExecutionRequest(
        "import os\nopen('" + name + "', 'wb').write(os.urandom(" + kib + " * 1024))\n",
        "s",
        null,
        30);
  }

  @Test
  void aTenantPastItsStorage_keepsNothingMore_othersDo_andDeletingFreesRoom() {
    try (DefaultSandboxService service =
        TestServices.start(dataDir, Map.of("pool_size", "0", "tenant_storage_max_mb", "2"))) {
      SandboxService alice = service.forTenant("alice");
      SandboxService bob = service.forTenant("bob");
      RunRecord first = alice.run(write("one.bin", 1536));
      assertThat(artifact(first, "one.bin").skipped()).isNull();

      RunRecord second = alice.run(write("two.bin", 1536));
      assertThat(second.status()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(artifact(second, "two.bin").skipped())
          .isEqualTo(
              "not kept: the tenant's runs would keep more than it may (delete or purge runs to"
                  + " free room; 0.5 MiB was left) (tenant_storage_max_mb)");
      assertThat(artifact(second, "two.bin").sizeBytes()).isEqualTo(1536 * 1024);
      assertThat(second.artifactsDir()).as("nothing kept, no directory").isNull();
      assertThat(second.message())
          .isEqualTo("1 file was not kept (tenant_storage_max_mb; each file says why)");
      assertThat(alice.getRun(second.runId(), false).artifacts())
          .as("the run is recorded with the same list")
          .isEqualTo(second.artifacts());

      RunRecord bobs = bob.run(write("one.bin", 1536));
      assertThat(artifact(bobs, "one.bin").skipped()).as("another tenant has its own").isNull();

      alice.deleteRun(first.runId(), true);
      String sha = artifact(first, "one.bin").sha256();
      assertThat(Path.of(first.artifactsDir()).resolve(sha.substring(0, 2)).resolve(sha))
          .as("its blob, referenced by no other run, is gone")
          .doesNotExist();
      RunRecord third = alice.run(write("three.bin", 1536));
      assertThat(artifact(third, "three.bin").skipped()).as("the deleted run freed room").isNull();
    }
  }

  private static Artifact artifact(RunRecord r, String path) {
    return r.artifacts().stream().filter(a -> a.path().equals(path)).findFirst().orElseThrow();
  }
}

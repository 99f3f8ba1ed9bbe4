package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 item 9 (in part): each run kept a full copy of every changed file up to the whole disk
 * quota. kept_files_max_mb bounds what one run keeps; the run is recorded, and each file past the
 * cap is listed as not kept, naming the setting.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class KeptFilesCapTest {
  @TempDir Path dataDir;

  @Test
  void filesPastTheCap_areListedNotKept_namingTheSetting() {
    try (DefaultSandboxService service =
        TestServices.start(dataDir, Map.of("pool_size", "0", "kept_files_max_mb", "1"))) {
      RunRecord r =
          service.run(
              ExecutionRequest.of(
                  "import os\n"
                      + "for name in ('a.bin', 'b.bin'):\n"
                      + "    with open(name, 'wb') as f:\n"
                      + "        f.write(os.urandom(700 * 1024))\n"
                      + "print('written')"));
      assertThat(r.status()).as(r.message()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(r.artifacts()).hasSize(2);
      assertThat(r.artifacts().stream().filter(a -> a.skipped() == null))
          .as("one fits under 1 MiB")
          .hasSize(1);
      Artifact notKept =
          r.artifacts().stream().filter(a -> a.skipped() != null).findFirst().orElseThrow();
      assertThat(notKept.skipped())
          .contains("not kept")
          .contains("1 MiB")
          .contains("kept_files_max_mb");
    }
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Pooled sandboxes can import the data stack before anyone asks for them. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class PoolPreloadTest {
  @TempDir Path dataDir;

  @Test
  void pooledSandboxes_haveThePreloadedModulesImported_butNotInTheUsersNamespace() {
    try (DefaultSandboxService service =
        TestServices.start(dataDir, Map.of("pool_size", "1", "pool_preload", "numpy,pandas"))) {
      var r =
          service.run(
              ExecutionRequest.of(
                  "import sys\nprint('numpy' in sys.modules, 'pandas' in sys.modules, 'np' in globals())"));
      assertThat(r.stdout()).isEqualTo("True True False\n");
    }
  }
}

package dev.pysandbox;

import dev.pysandbox.core.DefaultSandboxService;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test class whose tests share one real service (real bwrap, real Python, real SQLite) on a
 * temporary data directory, started once before them and closed after them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class SharedServiceTest {
  protected DefaultSandboxService service;
  protected Path dataDir;

  /** The service's settings; by default no warm pool (no sandbox starts in the background). */
  protected Map<String, String> settings(Path dataDir) throws IOException {
    return Map.of("pool_size", "0");
  }

  @BeforeAll
  final void startService(@TempDir Path dir) throws IOException {
    dataDir = dir;
    service = TestServices.start(dir, settings(dir));
  }

  @AfterAll
  final void stopService() {
    if (service != null) {
      service.close();
    }
  }
}

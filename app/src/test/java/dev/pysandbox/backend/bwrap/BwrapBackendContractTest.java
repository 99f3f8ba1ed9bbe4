package dev.pysandbox.backend.bwrap;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxBackendContract;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;

/** The backend contract on real bubblewrap, with the host's cgroups, uids and file systems. */
@Sandboxed
class BwrapBackendContractTest extends SandboxBackendContract {
  @TempDir static Path dataDir;

  private PysandboxConfig config() {
    return TestServices.config(dataDir, Map.of());
  }

  @Override
  protected SandboxBackend newBackend(String instanceId) throws Exception {
    PysandboxConfig config = config();
    DataLayout layout = new DataLayout(config.dataDir());
    return new BwrapBackend(config, layout, hub(layout, instanceId), instanceId, executor);
  }

  @Override
  protected Limits defaultLimits() {
    return config().defaultLimits();
  }
}

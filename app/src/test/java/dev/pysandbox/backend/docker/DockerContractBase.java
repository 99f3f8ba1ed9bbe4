package dev.pysandbox.backend.docker;

import dev.pysandbox.TestEngine;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxBackendContract;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;

/** The backend contract on the docker backend, over the engine a subclass names. */
abstract class DockerContractBase extends SandboxBackendContract {
  @TempDir static Path dataDir;

  /** {@code docker_host}, {@code docker_image} and whatever else picks the engine. */
  protected abstract Map<String, String> engineSettings();

  protected PysandboxConfig config() {
    Map<String, String> settings = new HashMap<>(engineSettings());
    settings.put("backend", "docker");
    return TestServices.config(dataDir, settings);
  }

  @Override
  protected SandboxBackend newBackend(String instanceId) throws Exception {
    PysandboxConfig config = config();
    DataLayout layout = new DataLayout(config.dataDir());
    return new DockerBackend(config, layout, hub(layout, instanceId), instanceId, executor);
  }

  @Override
  protected List<String> leftOf(String instanceId) {
    TestEngine e = TestEngine.get();
    try (DockerEngine engine = new DockerEngine(e.dockerHost(), 2)) {
      // Scoped to this class's data directory: the other contract classes on the same engine use
      // the same instance ids, and may run at the same time in another fork.
      return engine
          .withLabels(
              Map.of(
                  DockerBackend.LABEL_INSTANCE,
                  instanceId,
                  DockerBackend.LABEL_DATA_DIR,
                  new DataLayout(dataDir).identity()))
          .stream()
          .map(c -> c.getLabels().get(DockerBackend.LABEL_SANDBOX) + " " + c.getState())
          .toList();
    }
  }

  @Override
  protected Limits defaultLimits() {
    return config().defaultLimits();
  }
}

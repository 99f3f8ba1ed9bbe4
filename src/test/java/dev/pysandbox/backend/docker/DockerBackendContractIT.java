package dev.pysandbox.backend.docker;

import dev.pysandbox.TestServices;
import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxBackendContract;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.testing.TestEngine;
import dev.pysandbox.worker.WorkerHub;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend contract on a real container engine: Podman's Docker-compatible service, started for
 * the tests, with the image scripts/build-image.sh makes.
 */
class DockerBackendContractIT extends SandboxBackendContract {
  @TempDir static Path dataDir;
  private final List<WorkerHub> hubs = new ArrayList<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();

  private PysandboxConfig config() {
    TestEngine engine = TestEngine.get();
    return TestServices.config(
        dataDir,
        Map.of(
            "backend", "docker",
            "docker_host", engine.dockerHost(),
            "docker_image", engine.image()));
  }

  @Override
  protected SandboxBackend newBackend(String instanceId) throws Exception {
    PysandboxConfig config = config();
    DataLayout layout = new DataLayout(config.dataDir());
    WorkerHub hub = WorkerHub.open(layout.runtimeDir().resolve("contract-" + instanceId + ".sock"));
    hubs.add(hub);
    return new DockerBackend(config, layout, hub, instanceId, executor);
  }

  @Override
  protected Limits defaultLimits() {
    return config().defaultLimits();
  }

  @Override
  protected void releaseResources() {
    hubs.forEach(WorkerHub::close);
    executor.shutdownNow();
  }
}

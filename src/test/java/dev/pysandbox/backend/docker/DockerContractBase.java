package dev.pysandbox.backend.docker;

import dev.pysandbox.TestServices;
import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxBackendContract;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.worker.WorkerHub;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.io.TempDir;

/** The backend contract on the docker backend, over the engine a subclass names. */
abstract class DockerContractBase extends SandboxBackendContract {
  @TempDir static Path dataDir;
  private final List<WorkerHub> hubs = new ArrayList<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();

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

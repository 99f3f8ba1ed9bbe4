package dev.pysandbox.app;

import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.CoreParts;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.egress.EgressGate;
import dev.pysandbox.egress.EgressProxy;
import dev.pysandbox.models.ModelClients;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.worker.WorkerHub;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Executor;

/**
 * The one place the server is assembled: the core over the backends this build has ({@link
 * Backends}), the SQLite store ({@link StoreFactory}), Jetty's egress proxy ({@link EgressProxy})
 * and the model providers of agent runs through LangChain4j ({@link ModelClients}). The faces and
 * the CLI start a core through here; the core itself knows the SPIs only.
 */
public final class Assembly implements CoreParts {
  /** The parts of this build; stateless. */
  public static final Assembly PARTS = new Assembly();

  private Assembly() {}

  /** {@link DefaultSandboxService#start} on this build's parts. */
  public static DefaultSandboxService start(PysandboxConfig config) {
    return DefaultSandboxService.start(config, PARTS);
  }

  /** {@link DefaultSandboxService#create} on this build's parts. */
  public static DefaultSandboxService create(PysandboxConfig config, Clock clock) {
    return DefaultSandboxService.create(config, clock, PARTS);
  }

  /** {@link DefaultSandboxService#openReadOnly} on this build's parts. */
  public static DefaultSandboxService openReadOnly(PysandboxConfig config) {
    return DefaultSandboxService.openReadOnly(config, PARTS);
  }

  @Override
  public SandboxBackend backend(
      PysandboxConfig config,
      DataLayout layout,
      WorkerHub hub,
      String instanceId,
      Executor blocking) {
    return Backends.select(config, layout, hub, instanceId, blocking);
  }

  @Override
  public SandboxBackend inspectBackend(PysandboxConfig config, DataLayout layout) {
    return Backends.inspect(config, layout);
  }

  @Override
  public RunStore openRunStore(DataLayout layout, Clock clock, boolean lookOnly) {
    return StoreFactory.openRunStore(layout, clock, lookOnly);
  }

  @Override
  public void requireWritable(DataLayout layout) {
    StoreFactory.requireWritable(layout);
  }

  @Override
  public EgressGate egress(Path socketDir) {
    return new EgressProxy(socketDir);
  }

  /** Null for agent_provider sampling: the MCP face asks the client's own model. */
  @Override
  public ModelClient model(PysandboxConfig config) {
    return "sampling".equals(config.agent().provider())
        ? null
        : ModelClients.create(config.agent());
  }
}

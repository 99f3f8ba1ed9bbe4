package dev.pysandbox.core;

import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.egress.EgressGate;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.worker.WorkerHub;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Executor;

/**
 * The parts the core runs on but does not build: its sandbox backend, its store and its egress
 * proxy. The core knows them by their SPIs only ({@link SandboxBackend}, {@link RunStore}); which
 * kinds exist (bwrap or a container engine, SQLite through JDBC) is decided where the server is
 * assembled, {@code dev.pysandbox.app}, which hands an implementation of this to {@link
 * DefaultSandboxService}.
 */
public interface CoreParts {
  /**
   * The backend a server uses, as the {@code backend} setting names it; cheap, it sets nothing up
   * (see {@link SandboxBackend#unavailableReason()}).
   *
   * @param hub where its sandboxes' runners connect
   * @param instanceId this server process's id, which prefixes every sandbox id
   * @param blocking runs the blocking parts of starting and killing
   */
  SandboxBackend backend(
      PysandboxConfig config,
      DataLayout layout,
      WorkerHub hub,
      String instanceId,
      Executor blocking);

  /**
   * The backend of a core that only looks ({@code doctor}, {@code runs}): it checks what a server's
   * would, but starts no sandbox.
   */
  SandboxBackend inspectBackend(PysandboxConfig config, DataLayout layout);

  /**
   * Opens the run history of {@code layout}'s data directory, creating and migrating it unless
   * {@code lookOnly}.
   *
   * @throws dev.pysandbox.api.PysandboxException {@code store_unavailable} when it cannot be opened
   */
  RunStore openRunStore(DataLayout layout, Clock clock, boolean lookOnly);

  /**
   * Checks, opening nothing, that the store of {@code layout}'s data directory can be written: a
   * server whose store cannot be written fails at start with one line.
   *
   * @throws dev.pysandbox.api.PysandboxException {@code store_unavailable} naming what and why
   */
  void requireWritable(DataLayout layout);

  /**
   * A new egress proxy serving its doors' sockets in {@code socketDir}, not yet started; the core
   * makes one on first use and closes it at shutdown.
   */
  EgressGate egress(Path socketDir);

  /**
   * The model provider of agent runs that the server's settings name (agent_provider openai,
   * anthropic or ollama): made on first use, one per server. Null when agent_provider is sampling
   * (the caller's own model is asked).
   *
   * @throws dev.pysandbox.api.PysandboxException invalid_argument when the settings name a provider
   *     that cannot be used (no key where one is needed, a bad address)
   */
  default dev.pysandbox.api.agent.ModelClient model(PysandboxConfig config) {
    return null;
  }
}

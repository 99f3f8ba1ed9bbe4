package dev.pysandbox.backend;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The SPI for a kind of sandbox (bubblewrap, a container engine, ...). A backend starts sandboxes,
 * each holding one runner that speaks the worker protocol, and kills them. It knows nothing of
 * sessions, runs or faces.
 *
 * <p>Implementations are thread-safe.
 */
public interface SandboxBackend extends AutoCloseable {
  /** Short name used in configuration and reports, e.g. {@code bwrap}. */
  String name();

  /**
   * Why this backend cannot start sandboxes on this host, naming what is missing and how to install
   * it; empty when it can.
   */
  Optional<String> unavailableReason();

  /**
   * Starts a sandbox and completes when its runner is ready for requests.
   *
   * @return completes exceptionally with {@link dev.pysandbox.api.PysandboxException} ({@code
   *     backend_unavailable}) carrying what the sandbox printed when it fails to start
   */
  CompletableFuture<Sandbox> start(SandboxSpec spec);

  /**
   * The server is stopping: sandboxes that end from now on leave their resources for {@link
   * #close()} to release all at once, instead of one by one as each ends.
   */
  default void stopping() {}

  /** Kills every sandbox this backend started and releases its resources. */
  @Override
  void close();
}

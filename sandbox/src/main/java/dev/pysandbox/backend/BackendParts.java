package dev.pysandbox.backend;

import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.worker.WorkerHub;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * What a backend built on {@link AbstractSandboxBackend} is made from, in one value: the backends
 * pass it to the skeleton instead of repeating the list of six.
 *
 * @param hub null only when {@code inspectOnly}
 * @param instanceId this server process's id; it prefixes every sandbox id so that start-up hygiene
 *     can tell whose sandboxes are whose (null when {@code inspectOnly})
 * @param blocking runs the blocking parts of starting and killing
 * @param inspectOnly only looks: starts no helper process and no sandbox
 */
public record BackendParts(
    PysandboxConfig config,
    DataLayout layout,
    WorkerHub hub,
    String instanceId,
    Executor blocking,
    boolean inspectOnly) {

  /** The parts of a backend that serves: a hub it must have, its id and its blocking executor. */
  public static BackendParts serving(
      PysandboxConfig config,
      DataLayout layout,
      WorkerHub hub,
      String instanceId,
      Executor blocking) {
    return new BackendParts(
        config, layout, Objects.requireNonNull(hub, "hub"), instanceId, blocking, false);
  }

  /** The parts of a backend that only looks ({@code doctor}, {@code runs}): no hub, no id. */
  public static BackendParts inspecting(PysandboxConfig config, DataLayout layout) {
    return new BackendParts(config, layout, null, null, Runnable::run, true);
  }
}

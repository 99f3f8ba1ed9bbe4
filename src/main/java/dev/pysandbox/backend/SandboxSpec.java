package dev.pysandbox.backend;

import dev.pysandbox.api.Limits;
import java.util.List;
import java.util.Objects;

/**
 * What a new sandbox should be.
 *
 * @param preload modules the runner imports before it reports ready (may be empty)
 * @param outputLimit bytes of stdout and of stderr kept per request
 * @param limits its resource limits
 * @param idleOutputMax bytes of stdout and stderr that may arrive between requests (from processes
 *     the code left running) before the sandbox's other processes are stopped ({@code
 *     output_max_mb})
 */
public record SandboxSpec(
    List<String> preload, int outputLimit, Limits limits, long idleOutputMax) {
  public SandboxSpec {
    preload = List.copyOf(preload);
    Objects.requireNonNull(limits, "limits");
  }

  /** The same sandbox with other limits. */
  public SandboxSpec withLimits(Limits other) {
    return new SandboxSpec(preload, outputLimit, other, idleOutputMax);
  }
}

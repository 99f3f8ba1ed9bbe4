package dev.pysandbox.backend;

import java.util.List;

/**
 * What a new sandbox should be.
 *
 * @param preload modules the runner imports before it reports ready (may be empty)
 * @param outputLimit bytes of stdout and of stderr kept per request
 */
public record SandboxSpec(List<String> preload, int outputLimit) {
  public SandboxSpec {
    preload = List.copyOf(preload);
  }
}

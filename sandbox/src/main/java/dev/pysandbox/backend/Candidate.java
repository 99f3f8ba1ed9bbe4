package dev.pysandbox.backend;

import java.util.function.Supplier;

/**
 * A backend that {@code backend=auto} may try: how to build it, or why this build cannot.
 *
 * @param build makes the backend (cheaply: set-up waits for its first {@code unavailableReason});
 *     {@code null} when it cannot be built here
 * @param notBuilt why not, when {@code build} is null
 */
public record Candidate(String name, Supplier<SandboxBackend> build, String notBuilt) {
  public Candidate(String name, Supplier<SandboxBackend> build) {
    this(name, build, null);
  }

  public Candidate(String name, String notBuilt) {
    this(name, null, notBuilt);
  }
}

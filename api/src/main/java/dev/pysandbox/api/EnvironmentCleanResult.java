package dev.pysandbox.api;

import java.util.List;

/**
 * The answer of {@code clean_environments}.
 *
 * @param dryRun true: nothing was removed; the lists say what would be
 * @param removed keys removed (or that would be)
 * @param freedBytes what they took
 * @param keptInUse keys old enough that were kept because a sandbox has them
 */
public record EnvironmentCleanResult(
    boolean dryRun, List<String> removed, long freedBytes, List<String> keptInUse) {
  public EnvironmentCleanResult {
    removed = List.copyOf(removed);
    keptInUse = List.copyOf(keptInUse);
  }
}

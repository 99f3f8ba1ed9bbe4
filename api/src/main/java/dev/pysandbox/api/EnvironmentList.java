package dev.pysandbox.api;

import java.util.List;

/**
 * The answer of {@code list_environments}.
 *
 * @param environments by key
 * @param totalBytes what they take together
 */
public record EnvironmentList(List<EnvironmentInfo> environments, long totalBytes) {
  public EnvironmentList {
    environments = List.copyOf(environments);
  }
}

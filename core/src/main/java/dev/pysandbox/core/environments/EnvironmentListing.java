package dev.pysandbox.core.environments;

import dev.pysandbox.core.sandboxes.SpareSandboxes;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.TimeSource;
import java.util.function.Supplier;

/**
 * The package environments as a tenant sees them ({@code list_environments}, {@code
 * clean_environments}): those its runs and sessions used (every one on disk for the local tenant:
 * stdio and the CLI), with their use as the store counted it and whether a sandbox holds them now.
 */
public final class EnvironmentListing {
  private final Supplier<RunStore> store;
  private final Environments environments;
  private final SpareSandboxes spares;
  private final TimeSource time;

  public EnvironmentListing(
      Supplier<RunStore> store, Environments environments, SpareSandboxes spares, TimeSource time) {
    this.store = store;
    this.environments = environments;
    this.spares = spares;
    this.time = time;
  }

  /**
   * The environments the tenant's runs and sessions used ({@code null}: every one on disk, for
   * stdio and the CLI).
   */
  public dev.pysandbox.api.EnvironmentList list(String tenant) {
    java.util.Map<String, dev.pysandbox.store.EnvironmentUse> use = new java.util.HashMap<>();
    for (dev.pysandbox.store.EnvironmentUse u : store.get().environmentUse(tenant)) {
      use.put(u.key(), u);
    }
    java.util.List<dev.pysandbox.api.EnvironmentInfo> out = new java.util.ArrayList<>();
    long total = 0;
    for (Environments.Ready env : visibleEnvironments(tenant, use)) {
      dev.pysandbox.store.EnvironmentUse u = use.get(env.key());
      java.time.Instant last = environments.lastUsed(env);
      if (u != null && u.lastUsedAt().isAfter(last)) {
        last = u.lastUsedAt();
      }
      out.add(
          new dev.pysandbox.api.EnvironmentInfo(
              env.key(),
              env.requirements(),
              env.sizeBytes(),
              env.createdAt().toString(),
              last.toString(),
              u == null ? 0 : u.runs(),
              environments.inUse(
                  env.key(),
                  spares.count(
                      spec ->
                          spec.environment() != null
                              && spec.environment().key().equals(env.key()))),
              env.envHash(),
              env.pipFreeze()));
      total += env.sizeBytes();
    }
    return new dev.pysandbox.api.EnvironmentList(out, total);
  }

  private java.util.List<Environments.Ready> visibleEnvironments(
      String tenant, java.util.Map<String, dev.pysandbox.store.EnvironmentUse> use) {
    return environments.all().stream()
        .filter(e -> tenant == null || use.containsKey(e.key()))
        .toList();
  }

  /** Removes the tenant's environments (every one with {@code null}) unused for that long. */
  public dev.pysandbox.api.EnvironmentCleanResult clean(
      String tenant, int olderThanDays, boolean dryRun) {
    java.util.Map<String, dev.pysandbox.store.EnvironmentUse> use = new java.util.HashMap<>();
    for (dev.pysandbox.store.EnvironmentUse u : store.get().environmentUse(tenant)) {
      use.put(u.key(), u);
    }
    java.util.List<Environments.Ready> candidates = visibleEnvironments(tenant, use);
    java.util.Set<String> keys = new java.util.HashSet<>();
    candidates.forEach(e -> keys.add(e.key()));
    // A spare sandbox (started ahead of the next one-shot run) is no use of its environment.
    spares.drop(spec -> spec.environment() != null && keys.contains(spec.environment().key()));
    java.util.Map<String, Long> removed = environments.clean(candidates, olderThanDays, dryRun);
    java.time.Instant cutoff = time.instant().minus(java.time.Duration.ofDays(olderThanDays));
    java.util.List<String> kept =
        candidates.stream()
            .filter(e -> !removed.containsKey(e.key()))
            .filter(e -> !environments.lastUsed(e).isAfter(cutoff))
            .map(Environments.Ready::key)
            .toList();
    long freed = removed.values().stream().mapToLong(Long::longValue).sum();
    return new dev.pysandbox.api.EnvironmentCleanResult(
        dryRun, java.util.List.copyOf(removed.keySet()), freed, kept);
  }
}

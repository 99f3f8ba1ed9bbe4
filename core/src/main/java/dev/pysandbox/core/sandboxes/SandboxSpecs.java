package dev.pysandbox.core.sandboxes;

import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.config.Tier;
import java.util.ArrayList;
import java.util.List;

/**
 * What a sandbox of a tier is, for the backend: the tier's host directories and import policy, and
 * the limits it was given, with the server's preloads and output bounds. Two sandboxes of the same
 * tier and limits have equal specs, which is how the warm pool tells what it can hand out.
 */
public final class SandboxSpecs {
  private final PysandboxConfig config;
  private final SandboxSpec pooled;

  public SandboxSpecs(PysandboxConfig config) {
    this.config = config;
    Tier d = config.tiers().defaultTier();
    this.pooled = of(d, d.limits());
  }

  /** The warm pool's: the default tier with its own limits. */
  public SandboxSpec pooled() {
    return pooled;
  }

  public SandboxSpec of(Tier tier, Limits limits) {
    List<SandboxSpec.HostMount> mounts = new ArrayList<>();
    tier.mounts().forEach((name, path) -> mounts.add(new SandboxSpec.HostMount(name, path)));
    return new SandboxSpec(
        config.poolPreload(),
        config.outputLimitBytes(),
        limits,
        config.outputMaxBytes(),
        new SandboxSpec.Imports(tier.name(), tier.importDeny(), tier.importAllow()),
        mounts);
  }
}

package dev.pysandbox.backend;

import dev.pysandbox.api.Limits;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What a new sandbox should be. Everything here is fixed when the sandbox starts: nothing the code
 * in it does changes its limits, its host directories or the import policy its runner installs
 * before any user code runs.
 *
 * @param preload modules the runner imports before it reports ready (may be empty)
 * @param outputLimit bytes of stdout and of stderr kept per request
 * @param limits its resource limits
 * @param idleOutputMax bytes of stdout and stderr that may arrive between requests (from processes
 *     the code left running) before the sandbox's other processes are stopped ({@code
 *     output_max_mb})
 * @param imports the import policy of its runner ({@link Imports#NONE} for none)
 * @param mounts host directories bound read-only into it, in order
 */
public record SandboxSpec(
    List<String> preload,
    int outputLimit,
    Limits limits,
    long idleOutputMax,
    Imports imports,
    List<HostMount> mounts) {
  public SandboxSpec {
    preload = List.copyOf(preload);
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(imports, "imports");
    mounts = List.copyOf(mounts);
  }

  /** A sandbox without an import policy or host directories. */
  public SandboxSpec(List<String> preload, int outputLimit, Limits limits, long idleOutputMax) {
    this(preload, outputLimit, limits, idleOutputMax, Imports.NONE, List.of());
  }

  /** The same sandbox with other limits. */
  public SandboxSpec withLimits(Limits other) {
    return new SandboxSpec(preload, outputLimit, other, idleOutputMax, imports, mounts);
  }

  /**
   * The import policy the runner installs before user code runs (defence in depth: the sandbox is
   * the boundary). An import by user code of a module in {@code deny} (or one of its submodules),
   * or, with {@code allow}, of a top-level module not in it, fails with {@code ImportError: import
   * of 'socket' is not allowed in tier 'basic'}; the runner reports such imports with the execution
   * that made them.
   *
   * @param tier the tier's name, for the message; {@code null} with no policy
   * @param deny modules denied with their submodules
   * @param allow the only top-level modules allowed, or {@code null} for any
   */
  public record Imports(String tier, List<String> deny, List<String> allow) {
    public static final Imports NONE = new Imports(null, List.of(), null);

    public Imports {
      deny = List.copyOf(deny);
      allow = allow == null ? null : List.copyOf(allow);
    }

    /** Whether the runner has anything to enforce. */
    public boolean isNone() {
      return deny.isEmpty() && allow == null;
    }
  }

  /**
   * A host directory bound read-only at {@code /mnt/host/<name>}.
   *
   * @param name an id ({@code [A-Za-z0-9_-]{1,64}})
   * @param source an absolute real path on the host
   */
  public record HostMount(String name, Path source) {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    /** Where host directories appear in a sandbox. */
    public static final String ROOT = "/mnt/host";

    public HostMount {
      if (name == null || !NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("mount name " + name + " is not an id");
      }
      if (source == null || !source.isAbsolute()) {
        throw new IllegalArgumentException("mount " + name + ": the source must be absolute");
      }
    }

    /** The path inside the sandbox. */
    public String target() {
      return ROOT + "/" + name;
    }
  }
}

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
 * @param environment a package environment bound at {@value Environment#TARGET}, or {@code null}
 * @param egress its way to the server's egress proxy, or {@code null} for no network at all
 */
public record SandboxSpec(
    List<String> preload,
    int outputLimit,
    Limits limits,
    long idleOutputMax,
    Imports imports,
    List<HostMount> mounts,
    Environment environment,
    Egress egress) {
  public SandboxSpec {
    preload = List.copyOf(preload);
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(imports, "imports");
    mounts = List.copyOf(mounts);
  }

  /** A sandbox without a package environment or network. */
  public SandboxSpec(
      List<String> preload,
      int outputLimit,
      Limits limits,
      long idleOutputMax,
      Imports imports,
      List<HostMount> mounts) {
    this(preload, outputLimit, limits, idleOutputMax, imports, mounts, null, null);
  }

  /** A sandbox without an import policy or host directories. */
  public SandboxSpec(List<String> preload, int outputLimit, Limits limits, long idleOutputMax) {
    this(preload, outputLimit, limits, idleOutputMax, Imports.NONE, List.of());
  }

  /** The same sandbox with other limits. */
  public SandboxSpec withLimits(Limits other) {
    return new SandboxSpec(
        preload, outputLimit, other, idleOutputMax, imports, mounts, environment, egress);
  }

  /** The same sandbox with this package environment (or none). */
  public SandboxSpec withEnvironment(Environment env) {
    return new SandboxSpec(
        preload, outputLimit, limits, idleOutputMax, imports, mounts, env, egress);
  }

  /** The same sandbox with these host directories. */
  public SandboxSpec withMounts(List<HostMount> other) {
    return new SandboxSpec(
        preload, outputLimit, limits, idleOutputMax, imports, other, environment, egress);
  }

  /** The same sandbox with this way out (or none). */
  public SandboxSpec withEgress(Egress way) {
    return new SandboxSpec(
        preload, outputLimit, limits, idleOutputMax, imports, mounts, environment, way);
  }

  /**
   * A package environment (a virtualenv made with {@code --system-site-packages}) bound at {@link
   * #TARGET}: read-only for the runs that use it, writable only for the sandbox that builds it. Its
   * site-packages directory comes first on the code's {@code sys.path}, its {@code bin} first on
   * {@code PATH}.
   *
   * @param key the environment's content hash (for logs)
   * @param dir the directory on the host; under the data directory's {@code sandbox/} so that
   *     sandboxes' own users can reach it
   * @param sitePackages its site-packages directory as the sandbox sees it, or {@code null} while
   *     it is being built
   * @param writable true only for the sandbox that builds it
   */
  public record Environment(String key, Path dir, String sitePackages, boolean writable) {
    /** Where an environment appears in a sandbox (the path its scripts were made for). */
    public static final String TARGET = "/opt/pysandbox/env";

    public Environment {
      Objects.requireNonNull(key, "key");
      if (dir == null || !dir.isAbsolute()) {
        throw new IllegalArgumentException("environment " + key + ": the dir must be absolute");
      }
      if (sitePackages != null && !sitePackages.startsWith(TARGET + "/")) {
        throw new IllegalArgumentException(
            "environment " + key + ": site-packages must lie under " + TARGET);
      }
    }
  }

  /**
   * How a sandbox reaches the server's egress proxy, its only way out: a door (a Unix socket) is
   * opened for the sandbox just before it starts and closed when it has exited. The sandbox still
   * has no network interface but loopback; a forwarder in it listens on {@code 127.0.0.1:}{@link
   * #PORT} and the code is given {@code HTTP_PROXY} and {@code HTTPS_PROXY} pointing there.
   * Compared by identity: sandboxes with a network are never pooled.
   */
  public interface Egress {
    /** The forwarder's port inside the sandbox. */
    int PORT = 3128;

    /** Where the door's socket appears inside the sandbox. */
    String SOCKET = "/run/pysandbox/egress.sock";

    /** A door for this sandbox, its socket readable and writable by the sandbox's host user. */
    Door open(String sandboxId);

    /** One sandbox's socket to the proxy. */
    interface Door extends AutoCloseable {
      /** The socket file on the host. */
      Path socket();

      /** Stops serving it, deletes the socket and ends every connection through it. */
      @Override
      void close();
    }
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

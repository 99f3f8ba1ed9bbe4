package dev.pysandbox.core.environments;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.MetricsRecorder;
import dev.pysandbox.api.MetricsRecorder.EnvironmentOutcome;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.packages.Requirement;
import dev.pysandbox.util.DiskFullException;
import dev.pysandbox.util.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Package environments: a set of requirements resolved once into a virtualenv made with {@code
 * --system-site-packages} over the sandbox's interpreter, cached by content under {@code
 * <data_dir>/sandbox/envs/<key>/}, and bound read-only at {@value SandboxSpec.Environment#TARGET}
 * into the sandboxes of the runs that ask for it.
 *
 * <p>This class is the cache: the key of a set of requirements, the environments there are, one
 * build per key (callers in this process share it; servers sharing the data directory wait on its
 * build lock), and cleaning. A build is {@link EnvironmentBuilder}'s (in a sandbox of its own,
 * whose only way out is the egress proxy, to the index hosts); the locks that keep an environment
 * in use from being removed are {@link EnvironmentLocks}'.
 */
public final class Environments implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Environments.class);
  private static final ObjectMapper JSON = Json.mapper();

  /** The key's version: bumped when the way environments are built changes. */
  private static final int KEY_VERSION = 1;

  /**
   * A finished environment.
   *
   * @param key its content hash (32 hex characters)
   * @param dir where it lies on the host
   * @param sitePackages its site-packages directory inside a sandbox
   * @param requirements the canonical requirements it was built from
   * @param pipFreeze {@code pip freeze} of what was installed into it
   * @param envHash sha256 of the sorted {@code name==version} list of every distribution code
   *     running with it sees (its own first), as a run's {@code env_hash}
   * @param createdAt when it was built
   * @param sizeBytes what it takes on disk
   */
  public record Ready(
      String key,
      Path dir,
      String sitePackages,
      List<String> requirements,
      String pipFreeze,
      String envHash,
      Instant createdAt,
      long sizeBytes) {
    public SandboxSpec.Environment mount() {
      return new SandboxSpec.Environment(key, dir, sitePackages, false);
    }
  }

  private final PysandboxConfig config;
  private final Path root;
  private final Supplier<Optional<InterpreterInfo>> python;
  private final Clock clock;
  private final MetricsRecorder metrics;
  private final EnvironmentBuilder builder;
  private final EnvironmentLocks locks;
  private final Map<String, CompletableFuture<Ready>> building = new ConcurrentHashMap<>();

  public Environments(
      PysandboxConfig config,
      DataLayout layout,
      SandboxBackend backend,
      Supplier<Optional<InterpreterInfo>> python,
      EnvironmentBuilder.BuildEgress egress,
      Clock clock,
      MetricsRecorder metrics) {
    this.config = config;
    this.root = layout.sandboxRoot().resolve("envs");
    this.python = python;
    this.clock = clock;
    this.metrics = metrics;
    this.builder = new EnvironmentBuilder(config, root, backend, egress, clock);
    this.locks = new EnvironmentLocks(root, clock);
  }

  /** Whether packages can be had at all: an index or a wheelhouse is configured. */
  Optional<String> unavailableReason() {
    if (config.indexUrl() == null && config.findLinks() == null) {
      return Optional.of(
          "no package source is configured: set index_url (a PEP 503 index) or find_links (a"
              + " wheelhouse directory)");
    }
    return Optional.empty();
  }

  /**
   * The key of an environment for these requirements with today's interpreter and index settings.
   */
  public String key(List<Requirement> requirements) {
    InterpreterInfo p = interpreter();
    Map<String, Object> k = new LinkedHashMap<>();
    k.put("v", KEY_VERSION);
    k.put("python", p.version() + " " + p.realExecutable());
    k.put("requirements", requirements.stream().map(Requirement::canonical).toList());
    k.put("index_url", config.indexUrl() == null ? null : config.indexUrl().toString());
    k.put("extra_index_urls", config.extraIndexUrls().stream().map(URI::toString).toList());
    k.put("find_links", config.findLinks() == null ? null : config.findLinks().toString());
    return Sha256.hex(Json.write(k)).substring(0, 32);
  }

  private InterpreterInfo interpreter() {
    return python
        .get()
        .orElseThrow(
            () ->
                new PysandboxException(
                    ErrorCode.BACKEND_UNAVAILABLE,
                    "no interpreter is known yet: the backend is not ready"));
  }

  /** The finished environment with this key, if there is one. */
  public Optional<Ready> find(String key) {
    Path dir = root.resolve(key);
    Path meta = dir.resolve(EnvironmentBuilder.META);
    if (!Files.isRegularFile(meta, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.empty();
    }
    try (InputStream in = Files.newInputStream(meta, LinkOption.NOFOLLOW_LINKS)) {
      JsonNode m = JSON.readTree(in.readNBytes(4 << 20));
      List<String> reqs = new ArrayList<>();
      m.path("requirements").forEach(r -> reqs.add(r.asText()));
      return Optional.of(
          new Ready(
              key,
              dir,
              m.path("site_packages").asText(),
              List.copyOf(reqs),
              m.path("pip_freeze").asText(),
              m.path("env_hash").asText(),
              Instant.parse(m.path("created_at").asText()),
              m.path("size_bytes").asLong()));
    } catch (IOException | RuntimeException e) {
      log.warn("environment {}: unreadable metadata ({}); it is rebuilt", key, e.toString());
      return Optional.empty();
    }
  }

  /**
   * The environment for these requirements, built now if it is not yet (blocking, up to {@code
   * env_build_timeout} plus the wait for another build of the same key).
   *
   * @param tenant who asked (the build's network attempts are its security events)
   * @param progress told each line the build prints, as it prints it (may be a no-op)
   * @throws PysandboxException {@code environment_failed} naming what pip said, {@code
   *     invalid_argument} when no package source is configured, {@code backend_unavailable} when no
   *     build sandbox can start
   */
  public Ready ensure(List<Requirement> requirements, String tenant, Consumer<String> progress) {
    if (requirements.isEmpty()) {
      throw new IllegalArgumentException("no requirements");
    }
    unavailableReason()
        .ifPresent(
            why -> {
              throw PysandboxException.invalid("packages cannot be installed: " + why);
            });
    String key = key(requirements);
    long began = System.nanoTime();
    Optional<Ready> done = find(key);
    if (done.isPresent()) {
      metrics.environmentEnsured(EnvironmentOutcome.REUSED, System.nanoTime() - began);
      return done.get();
    }
    boolean ok = false;
    try {
      Ready r = buildOrAwait(key, requirements, tenant, progress);
      ok = true;
      return r;
    } finally {
      metrics.environmentEnsured(
          ok ? EnvironmentOutcome.BUILT : EnvironmentOutcome.FAILED, System.nanoTime() - began);
    }
  }

  /** Builds the environment of {@code key}, or waits for the build of it already under way. */
  private Ready buildOrAwait(
      String key, List<Requirement> requirements, String tenant, Consumer<String> progress) {
    CompletableFuture<Ready> mine = new CompletableFuture<>();
    CompletableFuture<Ready> theirs = building.putIfAbsent(key, mine);
    if (theirs != null) {
      progress.accept("waiting for the build of environment " + key + " already under way");
      return await(theirs);
    }
    try {
      Ready r = buildLocked(key, requirements, tenant, progress);
      mine.complete(r);
      return r;
    } catch (RuntimeException e) {
      mine.completeExceptionally(e);
      throw e;
    } finally {
      building.remove(key, mine);
    }
  }

  private static Ready await(CompletableFuture<Ready> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted waiting for a build", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof PysandboxException p) {
        throw p;
      }
      throw new PysandboxException(
          ErrorCode.INTERNAL, "environment build failed: " + e.getCause(), e);
    }
  }

  /** Builds under the key's build lock, which other servers sharing the directory also take. */
  @SuppressWarnings("try") // the lock is held for the block, not used in it
  private Ready buildLocked(
      String key, List<Requirement> requirements, String tenant, Consumer<String> progress) {
    try (EnvironmentLocks.BuildLock lock =
        locks.awaitBuild(key, config.envBuildTimeoutSeconds() + 60L, progress)) {
      Optional<Ready> done = find(key);
      if (done.isPresent()) {
        return done.get();
      }
      builder.build(key, requirements, interpreter().version(), tenant, progress);
      locks.touch(key);
      return find(key)
          .orElseThrow(() -> new IOException("environment " + key + " vanished after its build"));
    } catch (IOException e) {
      DiskFullException full = DiskFullException.of(e, root, -1);
      throw PysandboxException.writeFailed("environment " + key, full != null ? full : e);
    }
  }

  // -- use --------------------------------------------------------------------------------------

  /**
   * Marks the environment in use by one sandbox until the returned handle is closed: {@link #clean}
   * never removes it meanwhile, nor does another server's.
   */
  AutoCloseable use(Ready env) {
    return locks.use(env.key());
  }

  /** When the environment was last given to a sandbox, or its build time. */
  public Instant lastUsed(Ready env) {
    return locks.lastUsed(env.key(), env.createdAt());
  }

  /** Whether a sandbox of this process or of another server uses it now. */
  public boolean inUse(String key) {
    return locks.inUse(key, 0);
  }

  /**
   * Whether a sandbox uses it now, not counting {@code spares} uses of this process (spare
   * sandboxes started ahead of a run: no run has them yet).
   */
  boolean inUse(String key, int spares) {
    return locks.inUse(key, spares);
  }

  /** Every finished environment, by key. */
  List<Ready> all() {
    List<Ready> out = new ArrayList<>();
    if (!Files.isDirectory(root)) {
      return out;
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(root)) {
      for (Path p : s) {
        String name = p.getFileName().toString();
        if (name.matches("[0-9a-f]{32}")) {
          find(name).ifPresent(out::add);
        }
      }
    } catch (IOException e) {
      log.warn("cannot list environments in {}: {}", root, e.toString());
    }
    out.sort(Comparator.comparing(Ready::key));
    return out;
  }

  /**
   * Removes (or with {@code dryRun} only names) finished environments not used for {@code
   * olderThanDays} days among {@code candidates}, never one in use. Holds each one's use lock
   * exclusively while it is moved aside, so no sandbox can take it meanwhile.
   *
   * @return the keys removed (or that would be), with their sizes
   */
  Map<String, Long> clean(List<Ready> candidates, int olderThanDays, boolean dryRun) {
    Instant cutoff = clock.instant().minus(Duration.ofDays(olderThanDays));
    Map<String, Long> removed = new LinkedHashMap<>();
    for (Ready env : candidates) {
      if (!lastUsed(env).isAfter(cutoff) && locks.remove(env.key(), env.dir(), dryRun)) {
        removed.put(env.key(), env.sizeBytes());
      }
    }
    return removed;
  }

  @Override
  public void close() {
    locks.close();
  }
}

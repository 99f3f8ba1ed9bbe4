package dev.pysandbox.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.MetricsRecorder;
import dev.pysandbox.api.MetricsRecorder.EnvironmentOutcome;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.packages.Requirement;
import dev.pysandbox.packages.Requirements;
import dev.pysandbox.util.DiskFullException;
import dev.pysandbox.util.DurableFiles;
import dev.pysandbox.util.Futures;
import dev.pysandbox.util.Pause;
import dev.pysandbox.util.RandomIds;
import dev.pysandbox.util.Sha256;
import dev.pysandbox.worker.RequestListener;
import dev.pysandbox.worker.WorkerReply;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * <p>A build runs in a sandbox of its own (the runner runs {@code python3 -m venv} and pip there):
 * its only way out is the egress proxy, to the index hosts; a wheelhouse ({@code find_links}) is
 * bound read-only. It writes into a temporary directory which is renamed into place only once pip
 * succeeded, so a failed or killed build leaves nothing half-made. One build per key: callers in
 * this process share it, and servers sharing the data directory wait on an exclusive lock on {@code
 * envs/.locks/<key>.build}. An environment in use holds a shared lock on {@code
 * envs/.locks/<key>.use}, which {@link #clean} needs exclusively to remove it.
 */
final class Environments implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Environments.class);
  private static final ObjectMapper JSON = Json.mapper();

  /** The metadata file each finished environment holds. */
  static final String META = "pysandbox-env.json";

  /** The key's version: bumped when the way environments are built changes. */
  private static final int KEY_VERSION = 1;

  private static final String RESULT_MARK = "@@pysandbox-env ";
  private static final long POLL_MILLIS = 500;

  /** What a build may print that is kept to explain a failure. */
  private static final int FAILURE_TAIL_CHARS = 4000;

  /** A build that ran out of space while the host's disk has less than this free: disk_full. */
  private static final long HOST_FULL_BELOW_BYTES = 64L << 20;

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
  record Ready(
      String key,
      Path dir,
      String sitePackages,
      List<String> requirements,
      String pipFreeze,
      String envHash,
      Instant createdAt,
      long sizeBytes) {
    SandboxSpec.Environment mount() {
      return new SandboxSpec.Environment(key, dir, sitePackages, false);
    }
  }

  /** Where builds come from and go through. */
  interface BuildEgress {
    /**
     * The way out of a build sandbox for this tenant: to the index hosts only; {@code null} when no
     * index is configured (a wheelhouse only).
     */
    SandboxSpec.Egress forBuild(String tenant);
  }

  private final PysandboxConfig config;
  private final Path root;
  private final Path locks;
  private final SandboxBackend backend;
  private final Supplier<Optional<InterpreterInfo>> python;
  private final BuildEgress egress;
  private final Clock clock;
  private final MetricsRecorder metrics;
  private final Map<String, CompletableFuture<Ready>> building = new ConcurrentHashMap<>();
  private final Map<String, Use> inUse = new ConcurrentHashMap<>();

  /** One key's shared use lock, held while any sandbox of this process has it. */
  private static final class Use {
    int count;
    FileChannel channel;
    FileLock lock;
  }

  Environments(
      PysandboxConfig config,
      DataLayout layout,
      SandboxBackend backend,
      Supplier<Optional<InterpreterInfo>> python,
      BuildEgress egress,
      Clock clock,
      MetricsRecorder metrics) {
    this.config = config;
    this.root = layout.sandboxRoot().resolve("envs");
    this.locks = root.resolve(".locks");
    this.backend = backend;
    this.python = python;
    this.egress = egress;
    this.clock = clock;
    this.metrics = metrics;
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
  String key(List<Requirement> requirements) {
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
  Optional<Ready> find(String key) {
    Path dir = root.resolve(key);
    Path meta = dir.resolve(META);
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
  Ready ensure(List<Requirement> requirements, String tenant, Consumer<String> progress) {
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
  private Ready buildLocked(
      String key, List<Requirement> requirements, String tenant, Consumer<String> progress) {
    long waitUntil =
        System.nanoTime() + TimeUnit.SECONDS.toNanos(config.envBuildTimeoutSeconds() + 60L);
    try {
      Files.createDirectories(locks);
      setMode(root, "rwxr-xr-x");
      setMode(locks, "rwx------");
      try (FileChannel ch =
          FileChannel.open(
              locks.resolve(key + ".build"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        FileLock lock = ch.tryLock();
        boolean told = false;
        while (lock == null) {
          if (!told) {
            progress.accept("waiting for another server's build of environment " + key);
            told = true;
          }
          if (System.nanoTime() - waitUntil > 0) {
            throw new PysandboxException(
                ErrorCode.ENVIRONMENT_FAILED,
                "environment "
                    + key
                    + " is being built by another server sharing this data directory, and it did"
                    + " not finish within env_build_timeout",
                true);
          }
          Pause.millis(POLL_MILLIS);
          lock = ch.tryLock();
        }
        try {
          Optional<Ready> done = find(key);
          if (done.isPresent()) {
            return done.get();
          }
          removeLeftovers(key);
          return build(key, requirements, tenant, progress);
        } finally {
          lock.release();
        }
      }
    } catch (IOException e) {
      DiskFullException full = DiskFullException.of(e, root, -1);
      throw PysandboxException.writeFailed("environment " + key, full != null ? full : e);
    }
  }

  /**
   * Temporary directories (and wheelhouse copies) of builds of this key that died with their
   * server.
   */
  private void removeLeftovers(String key) throws IOException {
    for (String kind : List.of(".build-", ".wheels-")) {
      try (DirectoryStream<Path> s = Files.newDirectoryStream(root, kind + key + "-*")) {
        for (Path p : s) {
          log.info("environment {}: removing {} left by a build that did not finish", key, p);
          deleteTree(p);
        }
      }
    }
  }

  private Ready build(
      String key, List<Requirement> requirements, String tenant, Consumer<String> progress)
      throws IOException {
    long started = System.nanoTime();
    Path temp = root.resolve(".build-" + key + "-" + RandomIds.hex(6));
    Files.createDirectory(temp);
    setMode(temp, "rwxr-xr-x");
    log.info(
        "environment {}: building {} ({})",
        key,
        requirements.stream().map(Requirement::canonical).toList(),
        temp);
    progress.accept(
        "building environment "
            + key
            + " for "
            + String.join(" ", requirements.stream().map(Requirement::canonical).toList()));
    boolean kept = false;
    try {
      JsonNode result = runBuild(key, temp, requirements, tenant, progress);
      fixOwnership(temp);
      long size = sizeOf(temp);
      if (size > config.envMaxBytes()) {
        throw new PysandboxException(
            ErrorCode.ENVIRONMENT_FAILED,
            "environment "
                + key
                + " takes "
                + size / Limits.MIB
                + " MiB, more than env_max_mb ("
                + config.envMaxBytes() / Limits.MIB
                + ")");
      }
      Instant now = clock.instant();
      Map<String, Object> meta = new LinkedHashMap<>();
      meta.put("key", key);
      meta.put("requirements", requirements.stream().map(Requirement::canonical).toList());
      meta.put("site_packages", result.path("site_packages").asText());
      meta.put("pip_freeze", result.path("pip_freeze").asText());
      List<String> dists = new ArrayList<>();
      result.path("distributions").forEach(d -> dists.add(d.asText()));
      meta.put("env_hash", InterpreterInfo.envHashOf(dists));
      meta.put("python", interpreter().version());
      meta.put("index_url", config.indexUrl() == null ? null : config.indexUrl().toString());
      meta.put("find_links", config.findLinks() == null ? null : config.findLinks().toString());
      meta.put("created_at", now.toString());
      meta.put("size_bytes", size);
      meta.put("build_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
      // Everything pip wrote on the disk (one syncfs reports a write-back that failed), the record
      // of it written whole, then the environment published by a rename that lasts.
      try (Descriptor built = Descriptor.openDirectory(temp)) {
        built.syncFileSystem();
      }
      DurableFiles.write(
          temp.resolve(META),
          -1,
          DurableFiles.bytes(Json.write(meta).getBytes(StandardCharsets.UTF_8)),
          PosixFilePermissions.fromString("rw-r--r--"));
      Path dir = root.resolve(key);
      Files.move(temp, dir, StandardCopyOption.ATOMIC_MOVE);
      DurableFiles.syncDirectory(root);
      kept = true;
      touch(key);
      progress.accept(
          "environment "
              + key
              + " built in "
              + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
              + " ms ("
              + size / 1024
              + " KiB)");
      return find(key)
          .orElseThrow(() -> new IOException("environment " + key + " vanished after its build"));
    } finally {
      if (!kept) {
        deleteTree(temp);
      }
    }
  }

  /** The build itself: a sandbox with the temporary directory bound writable, venv + pip. */
  private JsonNode runBuild(
      String key,
      Path temp,
      List<Requirement> requirements,
      String tenant,
      Consumer<String> progress) {
    Limits max = config.maxLimits();
    Limits d = config.defaultLimits();
    Limits limits =
        new Limits(
            Math.min(max.memoryBytes(), Math.max(d.memoryBytes(), 2048 * Limits.MIB)),
            Math.min(max.pids(), Math.max(d.pids(), 256)),
            max.cpus(),
            d.diskBytes(),
            max.tmpBytes());
    Wheelhouse wheels =
        config.findLinks() == null
            ? null
            : Wheelhouse.forBuild(config.findLinks(), root, key, config.envMaxBytes());
    try {
      return runInSandbox(key, temp, requirements, tenant, progress, limits, wheels);
    } finally {
      if (wheels != null) {
        wheels.close();
      }
    }
  }

  private JsonNode runInSandbox(
      String key,
      Path temp,
      List<Requirement> requirements,
      String tenant,
      Consumer<String> progress,
      Limits limits,
      Wheelhouse wheels) {
    List<SandboxSpec.HostMount> mounts = new ArrayList<>();
    if (wheels != null) {
      mounts.add(new SandboxSpec.HostMount("wheels", wheels.dir()));
    }
    SandboxSpec.Egress way = config.indexUrl() == null ? null : egress.forBuild(tenant);
    SandboxSpec spec =
        new SandboxSpec(
            List.of(),
            1 << 20,
            limits,
            64L << 20,
            SandboxSpec.Imports.NONE,
            mounts,
            new SandboxSpec.Environment(key, temp, null, true),
            way);
    Sandbox sandbox;
    try {
      sandbox = backend.start(spec).get(config.startupTimeoutSeconds() + 5L, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable c = Futures.unwrap(e);
      if (c instanceof PysandboxException p) {
        throw p;
      }
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "no build sandbox could start: " + c, c);
    } catch (TimeoutException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE, "no build sandbox became ready in time");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PysandboxException(ErrorCode.INTERNAL, "interrupted starting a build", e);
    }
    try {
      return exec(key, sandbox, temp, requirements, progress);
    } finally {
      KillOutcome.kill(sandbox, "environment build over");
      sandbox.exited().orTimeout(10, TimeUnit.SECONDS).exceptionally(e -> null).join();
      WorkspaceDisposal.discard(sandbox);
    }
  }

  private JsonNode exec(
      String key,
      Sandbox sandbox,
      Path temp,
      List<Requirement> requirements,
      Consumer<String> progress) {
    ObjectNode payload = JSON.createObjectNode();
    payload.put("code", BuildScript.of(config, Requirements.requirementsFile(requirements)));
    Lines lines = new Lines(progress);
    Future<WorkerReply> reply = sandbox.worker().request("exec", payload, lines);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(config.envBuildTimeoutSeconds());
    WorkerReply r;
    while (true) {
      try {
        r = reply.get(POLL_MILLIS, TimeUnit.MILLISECONDS);
        break;
      } catch (TimeoutException e) {
        if (System.nanoTime() - deadline > 0) {
          throw failed(
              key,
              "the build took longer than env_build_timeout ("
                  + config.envBuildTimeoutSeconds()
                  + " s) and was killed",
              lines.tail(),
              false);
        }
        long size = sizeOf(temp);
        if (size > config.envMaxBytes()) {
          throw failed(
              key,
              "the build wrote more than env_max_mb ("
                  + config.envMaxBytes() / Limits.MIB
                  + " MiB) and was killed",
              lines.tail(),
              false);
        }
      } catch (ExecutionException e) {
        throw failed(
            key,
            "the build sandbox died (" + Futures.unwrap(e).getMessage() + ")",
            lines.tail(),
            false);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new PysandboxException(ErrorCode.INTERNAL, "interrupted during a build", e);
      }
    }
    String out = r.stdout().text();
    String err = r.stderr().text();
    String status = r.frame().path("status").asText();
    int mark = out.lastIndexOf(RESULT_MARK);
    if (!"ok".equals(status) || mark < 0) {
      String local = PipFailures.localError(out + "\n" + err);
      if (local != null) {
        // Not the index's fault, whatever the probes of the indexes after it said.
        throw failed(
            key,
            "pip failed on a file of this host, not on the package index: "
                + PipFailures.explain(local, config.findLinks()),
            tail(PipFailures.withoutIndexProbes(out + "\n" + err).strip()),
            false);
      }
      String said =
          (out + "\n" + err).strip().replace(BuildScript.UNREACHABLE_MARK, "index unreachable: ");
      String why = r.frame().path("error").path("value").asText("");
      // Only the host's disk: a build's /tmp of its own (tmp_size_mb) can be full on its own.
      long hostFree = DiskFullException.usable(temp);
      if ((said.contains("No space left on device") || said.contains("Disk quota exceeded"))
          && hostFree >= 0
          && hostFree < HOST_FULL_BELOW_BYTES) {
        throw new PysandboxException(
            ErrorCode.DISK_FULL,
            "environment "
                + key
                + " could not be built: the disk that holds the environments is full ("
                + DiskFullException.describe(temp)
                + "); free space and try again\n--- pip said ---\n"
                + tail(said));
      }
      throw failed(
          key, why.isEmpty() ? "pip failed" : why, tail(said), indexUnreachable(out + err));
    }
    int end = out.indexOf('\n', mark);
    try {
      return JSON.readTree(
          out.substring(mark + RESULT_MARK.length(), end < 0 ? out.length() : end));
    } catch (IOException e) {
      throw failed(key, "the build's result was not readable", tail(out), false);
    }
  }

  /**
   * pip could not reach an index (the build script asked each index itself after pip failed, or pip
   * said so): a later try may succeed.
   */
  static boolean indexUnreachable(String printed) {
    return printed.contains(BuildScript.UNREACHABLE_MARK)
        || printed.contains("ProxyError")
        || printed.contains("NewConnectionError");
  }

  private static PysandboxException failed(
      String key, String why, String printed, boolean retryable) {
    return new PysandboxException(
        ErrorCode.ENVIRONMENT_FAILED,
        "environment "
            + key
            + " could not be built: "
            + why
            + (retryable ? " (the package index could not be reached; try again later)" : "")
            + (printed.isBlank() ? "" : "\n--- pip said ---\n" + printed),
        retryable);
  }

  private static String tail(String s) {
    return s.length() <= FAILURE_TAIL_CHARS
        ? s
        : "..." + s.substring(s.length() - FAILURE_TAIL_CHARS);
  }

  /** Splits a build's output into lines for its progress, keeping the last few. */
  private static final class Lines implements RequestListener {
    private final Consumer<String> progress;
    private final StringBuilder partial = new StringBuilder();
    private final StringBuilder tail = new StringBuilder();

    Lines(Consumer<String> progress) {
      this.progress = progress;
    }

    @Override
    public synchronized void output(boolean stderr, ByteBuffer bytes) {
      byte[] b = new byte[bytes.remaining()];
      bytes.get(b);
      partial.append(new String(b, StandardCharsets.UTF_8));
      int nl;
      while ((nl = partial.indexOf("\n")) >= 0) {
        String line = partial.substring(0, nl).stripTrailing();
        partial.delete(0, nl + 1);
        if (!line.startsWith(RESULT_MARK) && !line.isBlank()) {
          if (line.startsWith(BuildScript.UNREACHABLE_MARK)) {
            line = "index unreachable: " + line.substring(BuildScript.UNREACHABLE_MARK.length());
          }
          tail.append(line).append('\n');
          if (tail.length() > 2 * FAILURE_TAIL_CHARS) {
            tail.delete(0, tail.length() - FAILURE_TAIL_CHARS);
          }
          try {
            progress.accept(line.length() > 500 ? line.substring(0, 500) + "..." : line);
          } catch (RuntimeException e) {
            log.debug("environment build progress listener failed", e);
          }
        }
      }
      if (partial.length() > 64 * 1024) {
        partial.setLength(0);
      }
    }

    @Override
    public void display(ObjectNode bundle, long frameBytes) {}

    synchronized String tail() {
      return Environments.tail(tail.toString().strip());
    }
  }

  // -- use --------------------------------------------------------------------------------------

  /**
   * Marks the environment in use by one sandbox until the returned handle is closed: {@link #clean}
   * never removes it meanwhile, nor does another server's.
   */
  AutoCloseable use(Ready env) {
    String key = env.key();
    synchronized (inUse) {
      Use u = inUse.computeIfAbsent(key, k -> new Use());
      if (u.count == 0) {
        try {
          Files.createDirectories(locks);
          u.channel =
              FileChannel.open(
                  locks.resolve(key + ".use"),
                  StandardOpenOption.CREATE,
                  StandardOpenOption.READ,
                  StandardOpenOption.WRITE);
          u.lock = u.channel.lock(0, Long.MAX_VALUE, true);
        } catch (IOException e) {
          log.warn("environment {}: cannot take its use lock ({})", key, e.toString());
        }
      }
      u.count++;
    }
    touch(key);
    boolean[] closed = new boolean[1];
    return () -> {
      synchronized (inUse) {
        if (closed[0]) {
          return;
        }
        closed[0] = true;
        Use u = inUse.get(key);
        if (u != null && --u.count == 0) {
          inUse.remove(key);
          try {
            if (u.channel != null) {
              u.channel.close();
            }
          } catch (IOException e) {
            log.debug("environment {}: closing its use lock", key, e);
          }
        }
      }
    };
  }

  private void touch(String key) {
    Path used = locks.resolve(key + ".used");
    try {
      if (!Files.exists(used)) {
        Files.createDirectories(locks);
        Files.createFile(used);
      }
      Files.setLastModifiedTime(used, FileTime.from(clock.instant()));
    } catch (IOException e) {
      log.debug("environment {}: cannot mark it used", key, e);
    }
  }

  /** When the environment was last given to a sandbox, or its build time. */
  Instant lastUsed(Ready env) {
    try {
      return Files.getLastModifiedTime(locks.resolve(env.key() + ".used")).toInstant();
    } catch (IOException e) {
      return env.createdAt();
    }
  }

  /** Whether a sandbox of this process or of another server uses it now. */
  boolean inUse(String key) {
    return inUse(key, 0);
  }

  /**
   * Whether a sandbox uses it now, not counting {@code spares} uses of this process (spare
   * sandboxes started ahead of a run: no run has them yet). While this process holds it only for
   * spares, another server's use cannot be seen (the lock is ours) and counts as none.
   */
  boolean inUse(String key, int spares) {
    synchronized (inUse) {
      Use mine = inUse.get(key);
      if (mine != null) {
        return mine.count > spares;
      }
      try (FileChannel ch =
          FileChannel.open(
              locks.resolve(key + ".use"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        FileLock l = ch.tryLock();
        if (l == null) {
          return true;
        }
        l.release();
        return false;
      } catch (IOException e) {
        return true;
      }
    }
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
    out.sort(java.util.Comparator.comparing(Ready::key));
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
    Instant cutoff = clock.instant().minus(java.time.Duration.ofDays(olderThanDays));
    Map<String, Long> removed = new LinkedHashMap<>();
    for (Ready env : candidates) {
      if (lastUsed(env).isAfter(cutoff)) {
        continue;
      }
      synchronized (inUse) {
        if (inUse.containsKey(env.key())) {
          continue;
        }
        try (FileChannel ch =
            FileChannel.open(
                locks.resolve(env.key() + ".use"),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE)) {
          FileLock l = ch.tryLock();
          if (l == null) {
            continue; // another server's sandbox has it
          }
          try {
            if (!dryRun) {
              Path aside = root.resolve(".trash-" + env.key() + "-" + RandomIds.hex(6));
              Files.move(env.dir(), aside, StandardCopyOption.ATOMIC_MOVE);
              deleteTree(aside);
              Files.deleteIfExists(locks.resolve(env.key() + ".used"));
            }
            removed.put(env.key(), env.sizeBytes());
          } finally {
            l.release();
          }
        } catch (NoSuchFileException e) {
          // removed meanwhile
        } catch (IOException e) {
          log.warn("environment {}: cannot remove it ({})", env.key(), e.toString());
        }
      }
    }
    return removed;
  }

  // -- files ------------------------------------------------------------------------------------

  /**
   * After a build, with its sandbox gone: the server's own user owns every file and nobody but it
   * may write one (a sandbox built it as a uid that a later sandbox gets again). Never follows a
   * link.
   */
  private static void fixOwnership(Path dir) throws IOException {
    boolean root = dev.pysandbox.backend.HostUser.currentUid() == 0;
    try (var walk = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        if (root) {
          Files.setAttribute(p, "unix:uid", 0, LinkOption.NOFOLLOW_LINKS);
          Files.setAttribute(p, "unix:gid", 0, LinkOption.NOFOLLOW_LINKS);
        }
        if (Files.isSymbolicLink(p)) {
          continue;
        }
        Set<PosixFilePermission> perms =
            Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
        boolean exec = perms.contains(PosixFilePermission.OWNER_EXECUTE);
        boolean isDir = Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(
            p, PosixFilePermissions.fromString(isDir || exec ? "rwxr-xr-x" : "rw-r--r--"));
      }
    }
  }

  /** Bytes the directory takes (allocated blocks), without following links. */
  static long sizeOf(Path dir) {
    long[] total = new long[1];
    try (Descriptor d = Descriptor.openDirectory(dir)) {
      TreeWalk.walk(
          d,
          new TreeWalk.Visitor() {
            @Override
            public boolean entry(Descriptor parent, byte[] name, String path, Stat st, int depth) {
              total[0] += st.allocated();
              return st.isDirectory();
            }

            @Override
            public boolean wantsPaths() {
              return false;
            }
          });
    } catch (IOException e) {
      log.debug("cannot measure {}", dir, e);
    }
    return total[0];
  }

  private static void setMode(Path p, String mode) throws IOException {
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
  }

  static void deleteTree(Path dir) {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (var walk = Files.walk(dir)) {
      List<Path> all = walk.toList();
      for (int i = all.size() - 1; i >= 0; i--) {
        Path p = all.get(i);
        if (!Files.isSymbolicLink(p) && Files.isDirectory(p)) {
          p.toFile().setWritable(true, true);
        }
        Files.deleteIfExists(p);
      }
    } catch (IOException | java.io.UncheckedIOException e) {
      log.warn("cannot remove {}: {}", dir, e.toString());
    }
  }

  @Override
  public void close() {
    synchronized (inUse) {
      for (Use u : inUse.values()) {
        try {
          if (u.channel != null) {
            u.channel.close();
          }
        } catch (IOException e) {
          log.debug("closing a use lock", e);
        }
      }
      inUse.clear();
    }
  }
}

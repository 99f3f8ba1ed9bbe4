package dev.pysandbox.core.environments;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.Limits;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.SandboxBackend;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.files.Descriptor;
import dev.pysandbox.packages.Requirement;
import dev.pysandbox.util.DurableFiles;
import dev.pysandbox.util.RandomIds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds one package environment, called by {@link Environments} under the key's build lock: into a
 * temporary directory {@code <envs>/.build-<key>-<random>}, by a {@link BuildSandbox}; then the
 * files are made the server's, the size checked against {@code env_max_mb}, the metadata ({@link
 * #META}) written whole and synced, and the directory renamed into place. A failed or killed build
 * leaves nothing half-made; one that died with its server is removed by the next build of its key.
 */
final class EnvironmentBuilder {
  private static final Logger log = LoggerFactory.getLogger(EnvironmentBuilder.class);

  /** The metadata file each finished environment holds. */
  static final String META = "pysandbox-env.json";

  /** Where builds go through. */
  public interface BuildEgress {
    /**
     * The way out of a build sandbox for this tenant: to the index hosts only; {@code null} when no
     * index is configured (a wheelhouse only).
     */
    SandboxSpec.Egress forBuild(String tenant);
  }

  private final PysandboxConfig config;
  private final Path root;
  private final BuildEgress egress;
  private final Clock clock;
  private final BuildSandbox sandbox;

  EnvironmentBuilder(
      PysandboxConfig config, Path root, SandboxBackend backend, BuildEgress egress, Clock clock) {
    this.config = config;
    this.root = root;
    this.egress = egress;
    this.clock = clock;
    this.sandbox = new BuildSandbox(config, backend);
  }

  /**
   * Builds the environment of {@code key} and publishes it at {@code <envs>/<key>}.
   *
   * @param python the interpreter's version, recorded in the metadata
   * @param tenant who asked (the build's network attempts are its security events)
   */
  void build(
      String key,
      List<Requirement> requirements,
      String python,
      String tenant,
      Consumer<String> progress)
      throws IOException {
    removeLeftovers(key);
    long started = System.nanoTime();
    Path temp = root.resolve(".build-" + key + "-" + RandomIds.hex(6));
    Files.createDirectory(temp);
    EnvironmentFiles.setMode(temp, "rwxr-xr-x");
    List<String> canonical = requirements.stream().map(Requirement::canonical).toList();
    log.info("environment {}: building {} ({})", key, canonical, temp);
    progress.accept("building environment " + key + " for " + String.join(" ", canonical));
    boolean kept = false;
    try {
      JsonNode result = runBuild(key, temp, requirements, tenant, progress);
      EnvironmentFiles.fixOwnership(temp);
      long size = EnvironmentFiles.sizeOf(temp);
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
      Map<String, Object> meta = new LinkedHashMap<>();
      meta.put("key", key);
      meta.put("requirements", canonical);
      meta.put("site_packages", result.path("site_packages").asText());
      meta.put("pip_freeze", result.path("pip_freeze").asText());
      List<String> dists = new ArrayList<>();
      result.path("distributions").forEach(d -> dists.add(d.asText()));
      meta.put("env_hash", InterpreterInfo.envHashOf(dists));
      meta.put("python", python);
      meta.put("index_url", config.indexUrl() == null ? null : config.indexUrl().toString());
      meta.put("find_links", config.findLinks() == null ? null : config.findLinks().toString());
      meta.put("created_at", clock.instant().toString());
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
      Files.move(temp, root.resolve(key), StandardCopyOption.ATOMIC_MOVE);
      DurableFiles.syncDirectory(root);
      kept = true;
      progress.accept(
          "environment "
              + key
              + " built in "
              + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
              + " ms ("
              + size / 1024
              + " KiB)");
    } finally {
      if (!kept) {
        EnvironmentFiles.deleteTree(temp);
      }
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
          EnvironmentFiles.deleteTree(p);
        }
      }
    }
  }

  /** The build's limits and wheelhouse copy, then the build in its sandbox. */
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
      SandboxSpec.Egress way = config.indexUrl() == null ? null : egress.forBuild(tenant);
      return sandbox.run(key, temp, requirements, progress, limits, wheels, way);
    } finally {
      if (wheels != null) {
        wheels.close();
      }
    }
  }
}

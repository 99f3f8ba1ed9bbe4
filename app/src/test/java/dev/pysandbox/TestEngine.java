package dev.pysandbox;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The container engine every docker test uses (issue 17), one per JVM: Podman's Docker API and the
 * default image {@code pysandbox-python:<version>} in it. {@link #get} finds or makes it:
 *
 * <ul>
 *   <li>Under {@code scripts/test.sh}: the service that script started ({@value #DOCKER_HOST_ENV})
 *       and the image it builds in the background while the unit tests run. {@value
 *       #IMAGE_STATUS_ENV} names the file where the build's exit status appears (first line; the
 *       second line, or the sibling {@code .log}, is its log); {@code get} waits up to {@link
 *       #IMAGE_WAIT} for it, and fails with the log's tail when it is not 0.
 *   <li>With {@value #DOCKER_HOST_ENV} alone: that service, after {@code scripts/build-image.sh}
 *       against it (nothing to do when the image is current).
 *   <li>Otherwise ({@code mvn verify -Dit.test=...} by hand): a service of its own, {@code
 *       scripts/podman-service.sh start} in a temporary directory and stopped by a shutdown hook,
 *       and {@code scripts/build-image.sh} (cached between runs: about a second when the image is
 *       current; it takes a lock, so JVMs in parallel are safe).
 * </ul>
 *
 * <p>Nothing skips: a missing podman, runc or debootstrap fails with the message the scripts print,
 * and a failure is remembered, so every later test class in the JVM fails at once with it.
 */
public final class TestEngine {
  public static final String DOCKER_HOST_ENV = "PYSANDBOX_TEST_DOCKER_HOST";
  public static final String IMAGE_STATUS_ENV = "PYSANDBOX_TEST_IMAGE_STATUS";

  /** How long {@link #get} waits for the background image build (a cold one takes minutes). */
  public static final Duration IMAGE_WAIT = Duration.ofMinutes(12);

  static final Duration SERVICE_START = Duration.ofSeconds(60);
  static final Duration SERVICE_STOP = Duration.ofSeconds(60);
  static final Duration BUILD = Duration.ofMinutes(12);

  private static TestEngine instance;
  private static AssertionError failure;
  private static TestEngine gvisor;

  private final String dockerHost;
  private final String image;

  private TestEngine(String dockerHost, String image) {
    this.dockerHost = dockerHost;
    this.image = image;
  }

  /** The engine of this JVM, found or started on first use; fails (never skips) without one. */
  public static synchronized TestEngine get() {
    if (instance != null) {
      return instance;
    }
    if (failure != null) {
      throw new AssertionError("the test engine failed earlier in this JVM: " + failure, failure);
    }
    try {
      instance = open();
      return instance;
    } catch (AssertionError e) {
      failure = e;
      throw e;
    } catch (Exception e) {
      failure = new AssertionError("the test engine could not be opened: " + e, e);
      throw failure;
    }
  }

  /**
   * A second engine of this JVM whose default runtime is gVisor (runsc, registered by
   * podman-service.sh with {@code PYSANDBOX_PODMAN_RUNTIME=runsc}): Podman's Docker API ignores a
   * container's own runtime, so gVisor needs a service of its own. It shares the store, so the
   * image {@link #get} built is there.
   */
  public static synchronized TestEngine gvisor() {
    if (gvisor == null) {
      TestEngine main = get();
      try {
        String host = startOwnService(projectRoot(), "runsc");
        gvisor = new TestEngine(host, main.image());
      } catch (Exception e) {
        throw new AssertionError("the gVisor engine could not be started: " + e, e);
      }
    }
    return gvisor;
  }

  /** {@code unix:///…/podman.sock}, as {@code DOCKER_HOST} takes it. */
  public String dockerHost() {
    return dockerHost;
  }

  /** The default image, {@code pysandbox-python:<version>}, present in the engine. */
  public String image() {
    return image;
  }

  /** A docker-java client of this engine (Apache HttpClient 5 transport); the caller closes it. */
  public DockerClient newClient() {
    DefaultDockerClientConfig config =
        DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(dockerHost).build();
    ApacheDockerHttpClient http =
        new ApacheDockerHttpClient.Builder()
            .dockerHost(config.getDockerHost())
            .maxConnections(16)
            .connectionTimeout(Duration.ofSeconds(10))
            .responseTimeout(Duration.ofSeconds(60))
            .build();
    return DockerClientImpl.getInstance(config, http);
  }

  private static TestEngine open() throws Exception {
    Path root = projectRoot();
    String image = defaultImage(root);
    String host = System.getenv(DOCKER_HOST_ENV);
    String status = System.getenv(IMAGE_STATUS_ENV);
    long t0 = System.nanoTime();
    if (host != null && !host.isBlank()) {
      if (status != null && !status.isBlank()) {
        awaitImageBuild(Path.of(status), IMAGE_WAIT);
        log("the image build of scripts/test.sh: waited %d s", seconds(t0));
      } else {
        script(root, BUILD, host, "scripts/build-image.sh");
        log("scripts/build-image.sh: %d s", seconds(t0));
      }
    } else {
      if (status != null && !status.isBlank()) {
        throw new AssertionError(
            IMAGE_STATUS_ENV + " is set but " + DOCKER_HOST_ENV + " is not: set both or neither");
      }
      host = startOwnService(root, null);
      log("podman-service.sh start: %d s", seconds(t0));
      long t1 = System.nanoTime();
      script(root, BUILD, host, "scripts/build-image.sh");
      log("scripts/build-image.sh: %d s", seconds(t1));
    }
    TestEngine engine = new TestEngine(host, image);
    try (DockerClient docker = engine.newClient()) {
      docker.pingCmd().exec();
      docker.inspectImageCmd(image).exec();
    } catch (NotFoundException e) {
      throw new AssertionError(
          "the engine at " + host + " has no image " + image + " after its build: " + e, e);
    }
    return engine;
  }

  /** podman-service.sh in a temporary directory, stopped (and the directory removed) on exit. */
  private static String startOwnService(Path root, String runtime) throws Exception {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    if (tmp.toString().length() > 60) {
      tmp = Path.of("/tmp"); // a Unix socket's path has at most 107 bytes
    }
    Path dir = Files.createTempDirectory(tmp, "pysandbox-engine-");
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    script(root, SERVICE_STOP, null, "scripts/podman-service.sh", "stop", "" + dir);
                    deleteTree(dir);
                  } catch (Exception | AssertionError e) {
                    System.err.println("[test-engine] stopping the service in " + dir + ": " + e);
                  }
                },
                "test-engine-stop"));
    String out =
        scriptWithRuntime(
            root,
            SERVICE_START,
            null,
            runtime,
            "scripts/podman-service.sh",
            "start",
            dir.toString());
    return out.lines()
        .filter(l -> l.startsWith("export DOCKER_HOST="))
        .map(l -> l.substring("export DOCKER_HOST=".length()).strip())
        .findFirst()
        .orElseThrow(
            () -> new AssertionError("podman-service.sh start printed no DOCKER_HOST: " + out));
  }

  /**
   * Waits until {@code status} holds the build's exit status (scripts/test.sh writes it whole, by
   * rename); not 0, or no status within {@code limit}, fails with the tail of the build's log.
   */
  static void awaitImageBuild(Path status, Duration limit) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (true) {
      List<String> lines = readLines(status);
      if (!lines.isEmpty() && !lines.get(0).isBlank()) {
        String code = lines.get(0).strip();
        if (code.equals("0")) {
          return;
        }
        throw new AssertionError(
            "the image build (scripts/build-image.sh, started by scripts/test.sh) exited "
                + code
                + buildLog(status, lines));
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "the image build (scripts/build-image.sh, started by scripts/test.sh) wrote no status"
                + " to "
                + status
                + " within "
                + limit.toMinutes()
                + " min"
                + buildLog(status, lines));
      }
      Thread.sleep(1000);
    }
  }

  private static String buildLog(Path status, List<String> statusLines) {
    Path log;
    if (statusLines.size() > 1 && !statusLines.get(1).isBlank()) {
      log = Path.of(statusLines.get(1).strip());
    } else {
      String name = status.getFileName().toString();
      int dot = name.lastIndexOf('.');
      log = status.resolveSibling((dot > 0 ? name.substring(0, dot) : name) + ".log");
    }
    List<String> lines = readLines(log);
    if (lines.isEmpty()) {
      return " (no log at " + log + ")";
    }
    return "; the end of its log ("
        + log
        + "):\n"
        + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  private static List<String> readLines(Path file) {
    try {
      return Files.readAllLines(file, UTF_8);
    } catch (IOException e) {
      return List.of();
    }
  }

  /**
   * Runs a script of the repository with a time limit, its output in files (never a pipe that could
   * block it); {@code dockerHost}, when given, is its DOCKER_HOST. A non-zero exit or the limit
   * fails with its standard error; the process and what it started are killed at the limit.
   */
  static String script(Path root, Duration limit, String dockerHost, String... command)
      throws IOException, InterruptedException {
    return scriptWithRuntime(root, limit, dockerHost, null, command);
  }

  /** {@link #script}, the service's default OCI runtime given ({@code null}: runc). */
  static String scriptWithRuntime(
      Path root, Duration limit, String dockerHost, String runtime, String... command)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile("test-engine", ".out");
    Path err = Files.createTempFile("test-engine", ".err");
    try {
      ProcessBuilder pb =
          new ProcessBuilder(command)
              .directory(root.toFile())
              .redirectOutput(out.toFile())
              .redirectError(err.toFile());
      if (dockerHost != null) {
        pb.environment().put("DOCKER_HOST", dockerHost);
      }
      if (runtime != null) {
        pb.environment().put("PYSANDBOX_PODMAN_RUNTIME", runtime);
      }
      String what = String.join(" ", command);
      Process p = pb.start();
      p.getOutputStream().close();
      boolean done = false;
      try {
        done = p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
      } finally {
        if (!done) {
          List<ProcessHandle> all = new ArrayList<>(p.descendants().toList());
          all.add(p.toHandle());
          all.forEach(ProcessHandle::destroyForcibly);
          p.waitFor(10, TimeUnit.SECONDS);
        }
      }
      String stderr = Files.readString(err, UTF_8);
      System.err.print(stderr);
      if (!done) {
        throw new AssertionError(what + ": still running after " + limit + ", killed:\n" + stderr);
      }
      if (p.exitValue() != 0) {
        throw new AssertionError(what + " exited " + p.exitValue() + ":\n" + stderr);
      }
      return Files.readString(out, UTF_8);
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  /** The checkout: the first directory at or above {@code basedir} or the working directory. */
  static Path projectRoot() {
    List<String> starts = new ArrayList<>();
    for (String key : List.of("basedir", "user.dir")) {
      String value = System.getProperty(key);
      if (value != null && !value.isBlank()) {
        starts.add(value);
      }
    }
    for (String start : starts) {
      for (Path p = Path.of(start).toAbsolutePath(); p != null; p = p.getParent()) {
        if (Files.isRegularFile(p.resolve("pom.xml"))
            && Files.isRegularFile(p.resolve("scripts/podman-service.sh"))) {
          return p;
        }
      }
    }
    throw new AssertionError(
        "no checkout (pom.xml and scripts/podman-service.sh) at or above " + starts);
  }

  /**
   * The docker backend's default image, {@code pysandbox-python:<Version.VALUE>}, as
   * scripts/build-image.sh names it.
   */
  static String defaultImage(Path root) {
    return dev.pysandbox.config.Setting.DOCKER_IMAGE.defaultValue();
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths
          .sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.deleteIfExists(p);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    }
  }

  private static long seconds(long since) {
    return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - since);
  }

  private static void log(String format, Object... args) {
    System.err.printf("[test-engine] " + format + "%n", args);
  }
}

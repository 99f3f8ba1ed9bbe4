package dev.pysandbox.backend.docker;

import com.github.dockerjava.api.model.Bind;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.BackendSetup;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.backend.InterpreterInfo;
import dev.pysandbox.backend.InterpreterProbe;
import dev.pysandbox.backend.RunnerLaunch;
import dev.pysandbox.backend.SandboxFiles;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the docker backend finds once at set-up, and the finding: an engine on this host that
 * answers, the image, the runner's files installed and bound read-only, the door directory, the
 * seccomp profiles, and the interpreter as a probe container confined like a sandbox reports it
 * (which also checks that a runtime asked for by name is the one that runs).
 *
 * @param files the read-only binds every container gets (runner, init, stub {@code /etc})
 * @param doors the directory of the sandboxes' door directories
 * @param seccomp the security option per "the sandbox has egress"; empty when seccomp is off or
 *     only inspecting
 */
record DockerSetup(
    DockerEngine engine,
    String engineName,
    InterpreterInfo python,
    HostUser user,
    List<Bind> files,
    Path doors,
    Map<Boolean, String> seccomp)
    implements BackendSetup {
  private static final Logger log = LoggerFactory.getLogger(DockerSetup.class);

  @Override
  public String users() {
    return "uid "
        + user.uid()
        + " in a container of its own each (the same host uid for every container: the"
        + " engine's user namespace, if any, decides)";
  }

  static PysandboxException unavailable(String message) {
    return new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, "docker: " + message);
  }

  static DockerSetup find(
      PysandboxConfig config, DataLayout layout, ContainerConfig containers, boolean inspectOnly) {
    String host = config.dockerHost();
    if (!PysandboxConfig.localEngine(host)) {
      throw unavailable(
          host
              + " is not an engine on this host: the docker backend binds host directories into"
              + " its containers, so it needs a unix:// socket (set docker_host or DOCKER_HOST)");
    }
    if (!Files.exists(Path.of(host.substring("unix://".length())))) {
      throw unavailable(
          "no engine at "
              + host
              + ": start Docker, or Podman's service (scripts/podman-service.sh start DIR prints"
              + " the DOCKER_HOST to use), and set docker_host or DOCKER_HOST");
    }
    DockerEngine engine = new DockerEngine(host, 32);
    try {
      return find(engine, config, layout, containers, inspectOnly);
    } catch (RuntimeException e) {
      engine.close();
      throw e instanceof PysandboxException p ? p : unavailable(e.getMessage());
    }
  }

  private static DockerSetup find(
      DockerEngine engine,
      PysandboxConfig config,
      DataLayout layout,
      ContainerConfig containers,
      boolean inspectOnly) {
    String host = engine.host();
    com.github.dockerjava.api.model.Version version;
    try {
      engine.ping();
      version = engine.version();
    } catch (RuntimeException e) {
      throw unavailable("the engine at " + host + " does not answer: " + e.getMessage());
    }
    String image = config.dockerImage();
    if (!engine.hasImage(image)) {
      throw unavailable(
          "the engine at "
              + host
              + " has no image "
              + image
              + ": build it with 'DOCKER_HOST="
              + host
              + " scripts/build-image.sh', or set docker_image to an image with python3");
    }
    boolean root = HostUser.currentUid() == 0;
    HostUser user =
        root
            ? new HostUser(
                Integer.toString(DockerBackend.SANDBOX_UID),
                DockerBackend.SANDBOX_UID,
                DockerBackend.SANDBOX_UID)
            : new HostUser(System.getProperty("user.name"), HostUser.currentUid(), currentGid());
    Path lib = layout.libDir();
    List<Bind> files = new ArrayList<>();
    Path doors =
        root
            ? Path.of("/run/pysandbox/worker", layout.identity())
            : layout.runtimeDir().resolve("doors");
    try {
      SandboxFiles.prepareSandboxRoot(layout);
      files.add(script(lib, "/dev/pysandbox/worker/runner.py", "runner", RunnerLaunch.RUNNER));
      files.add(
          script(lib, "/dev/pysandbox/worker/analyzer.py", "analyzer", RunnerLaunch.ANALYZER));
      files.add(
          script(
              lib,
              "/dev/pysandbox/worker/egress_forward.py",
              "egress_forward",
              RunnerLaunch.FORWARDER));
      files.add(
          script(
              lib,
              "/dev/pysandbox/backend/docker/container_init.py",
              "container_init",
              DockerBackend.INIT));
      SandboxFiles.installEtc(lib);
      files.add(ContainerConfig.bind(lib.resolve("etc/passwd"), "/etc/passwd", true));
      files.add(ContainerConfig.bind(lib.resolve("etc/group"), "/etc/group", true));
      if (!inspectOnly) {
        Files.createDirectories(doors);
        Files.setPosixFilePermissions(doors, PosixFilePermissions.fromString("rwx--x--x"));
      }
    } catch (IOException | UncheckedIOException e) {
      throw unavailable("cannot prepare " + layout.sandboxRoot() + ": " + e.getMessage());
    }
    Map<Boolean, String> seccomp = new LinkedHashMap<>();
    if (config.seccomp() && !inspectOnly) {
      // Both variants now: a failure says so at set-up, not at some later start.
      boolean inline = DockerSeccomp.takesInlineProfile(version);
      for (boolean network : List.of(false, true)) {
        seccomp.put(network, DockerSeccomp.securityOpt(config.python(), layout, network, inline));
      }
    }
    InterpreterInfo python =
        probe(config, containers, engine, image, user, files, seccomp.get(false));
    log.info(
        "docker backend ready: {} at {}, image {} (python {}), runtime {}, sandboxes run as uid {}",
        DockerEngine.describe(version),
        host,
        image,
        python.version(),
        config.dockerRuntime().isEmpty() ? "the engine's default" : config.dockerRuntime(),
        user.uid());
    return new DockerSetup(
        engine, DockerEngine.describe(version), python, user, List.copyOf(files), doors, seccomp);
  }

  /** Installs a runner file in the library directory; its read-only bind at {@code target}. */
  private static Bind script(Path lib, String resource, String stem, String target) {
    return ContainerConfig.bind(
        lib.resolve(SandboxFiles.installScript(resource, stem, lib)), target, true);
  }

  private static int currentGid() {
    try {
      Object gid = Files.getAttribute(Path.of("/proc/self"), "unix:gid");
      return gid instanceof Integer i ? i : -1;
    } catch (IOException | UnsupportedOperationException e) {
      return -1;
    }
  }

  /** Runs the interpreter probe in a container of the image, confined like a sandbox. */
  private static InterpreterInfo probe(
      PysandboxConfig config,
      ContainerConfig containers,
      DockerEngine engine,
      String image,
      HostUser user,
      List<Bind> files,
      String seccomp) {
    String id = null;
    try {
      id =
          engine.create(
              image,
              cmd ->
                  cmd.withCmd("python3", "-I", "-c", KERNEL_LINE + InterpreterProbe.script())
                      .withUser(user.uid() + ":" + user.gid())
                      .withEnv(ContainerConfig.env(RunnerLaunch.environment(null, false)))
                      .withLabels(containers.labels("probe"))
                      .withHostConfig(containers.confined(config.defaultLimits(), files, seccomp)));
      engine.start(id);
      Integer code = engine.await(id, 60);
      String printed = engine.logs(id, 200);
      if (code == null || code != 0) {
        throw unavailable(
            "python3 did not run in image "
                + image
                + (code == null ? " within 60 s" : " (exit " + code + ")")
                + ": "
                + printed.strip());
      }
      checkRuntime(config, printed);
      return InterpreterProbe.parse(Path.of("/usr/bin/python3"), printed);
    } catch (IOException | RuntimeException e) {
      throw e instanceof PysandboxException p
          ? p
          : unavailable("cannot probe python3 in image " + image + ": " + e.getMessage());
    } finally {
      if (id != null) {
        engine.remove(id);
      }
    }
  }

  /** Printed first by the probe: the kernel the container runs on. */
  private static final String KERNEL_LINE =
      "import sys\nsys.stdout.write('pysandbox-kernel ' + open('/proc/version').read().strip()"
          + " + '\\n')\n";

  /**
   * A runtime asked for by name must be the one that ran the probe: a sandboxing runtime (runsc,
   * kata) runs its own kernel, so a probe that saw the host's kernel ran without it (Podman 4.3's
   * Docker API accepts any registered runtime's name and runs runc). Fails closed.
   */
  private static void checkRuntime(PysandboxConfig config, String printed) {
    String runtime = config.dockerRuntime();
    if (runtime.isEmpty() || runtime.equals("runc") || runtime.equals("crun")) {
      return;
    }
    String seen =
        printed
            .lines()
            .filter(l -> l.startsWith("pysandbox-kernel "))
            .map(l -> l.substring("pysandbox-kernel ".length()))
            .findFirst()
            .orElse("");
    String host;
    try {
      host = Files.readString(Path.of("/proc/version")).strip();
    } catch (IOException e) {
      host = "";
    }
    if (seen.isEmpty() || seen.equals(host)) {
      throw unavailable(
          "docker_runtime="
              + runtime
              + " was asked for, but the probe container ran on the host's kernel ("
              + (seen.isEmpty() ? "it said nothing" : seen)
              + "): the engine ignored the runtime (Podman 4.3's Docker API does). Use an engine"
              + " that honours it (Docker with "
              + runtime
              + " registered in daemon.json), or leave docker_runtime empty");
    }
  }
}

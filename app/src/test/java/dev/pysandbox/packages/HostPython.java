package dev.pysandbox.packages;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the host's Debian Python ({@code /usr/bin/python3}, not a pyenv shim on PATH), for checks
 * against pip's own code: its requirement parser, its requirements-file reader, its installer. pip
 * reads no config file and sees no proxy variable, so it only ever talks to the index a test names.
 * A process that outlives its limit is killed with its descendants. Missing Python fails loudly:
 * these checks are never skipped.
 */
final class HostPython {
  static final Path PYTHON = Path.of("/usr/bin/python3");

  /** How a process ended: its exit code (-1 when it was killed), its stdout and stderr. */
  record Result(List<String> command, int exit, String stdout, String stderr) {
    /** Everything needed to see what went wrong, for an assertion message. */
    String describe() {
      return String.join(" ", command)
          + "\n"
          + (exit < 0 ? "was killed" : "exited " + exit)
          + "\n--- stdout ---\n"
          + stdout
          + "\n--- stderr ---\n"
          + stderr;
    }
  }

  private HostPython() {}

  /** {@code /usr/bin/python3 args...}, with {@code stdin} (may be null) as its input. */
  static Result run(Duration limit, String stdin, List<String> args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(PYTHON.toString());
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    env.keySet()
        .removeIf(k -> k.toLowerCase(Locale.ROOT).endsWith("_proxy") || k.startsWith("PIP_"));
    env.put("PIP_CONFIG_FILE", "/dev/null");
    env.put("PYTHONNOUSERSITE", "1");
    Process p = pb.start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
    try (OutputStream in = p.getOutputStream()) {
      if (stdin != null) {
        in.write(stdin.getBytes(StandardCharsets.UTF_8));
      }
    }
    int exit;
    if (p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
      exit = p.exitValue();
    } else {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      exit = -1;
    }
    return new Result(command, exit, out.join(), err.join());
  }

  /** {@code pip install --target target ...}, quiet about its own version, without a cache. */
  static Result pipInstall(Path target, List<String> args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.addAll(
        List.of(
            "-m",
            "pip",
            "install",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--no-input",
            "--target",
            target.toString()));
    command.addAll(args);
    return run(Duration.ofSeconds(120), null, command);
  }

  /** What {@code module.hello()} returns when imported from {@code target}. */
  static Result hello(Path target, String module) throws IOException, InterruptedException {
    String code =
        "import sys; sys.path.insert(0, sys.argv[1]); import "
            + module
            + "; print("
            + module
            + ".hello())";
    return run(Duration.ofSeconds(60), null, List.of("-c", code, target.toString()));
  }

  private static String read(InputStream in) {
    try (in) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

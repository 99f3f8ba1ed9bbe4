package dev.pysandbox.notebook;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The system's Python ({@code /usr/bin/python3}, which has nbformat and no marimo; {@code python3}
 * on PATH may be a pyenv shim without them), run with a 30 s timeout.
 */
final class SystemPython {
  static final String PYTHON = "/usr/bin/python3";

  record Result(int exit, String stdout, String stderr) {}

  private SystemPython() {}

  /** Runs {@code python3 args...} in {@code dir} with {@code stdin} as its input. */
  static Result run(Path dir, String stdin, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(PYTHON));
    command.addAll(List.of(args));
    Path io = Files.createTempDirectory("pysandbox-python-io");
    try {
      Path in = Files.writeString(io.resolve("in"), stdin == null ? "" : stdin);
      ProcessBuilder pb =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectInput(in.toFile())
              .redirectOutput(io.resolve("out").toFile())
              .redirectError(io.resolve("err").toFile());
      pb.environment().put("LC_ALL", "C.UTF-8");
      Process p = pb.start();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        throw new AssertionError("python did not finish in 30 s: " + command);
      }
      return new Result(
          p.exitValue(),
          Files.readString(io.resolve("out"), StandardCharsets.UTF_8),
          Files.readString(io.resolve("err"), StandardCharsets.UTF_8));
    } finally {
      try (var files = Files.list(io)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(io);
    }
  }

  /** What {@code code} prints when Python runs it as a module: a run's stdout, really made. */
  static String stdoutOf(Path dir, String code) throws IOException, InterruptedException {
    Result r = run(dir, code, "-I", "-");
    assertThat(r.exit()).as("the code itself runs: %s", r.stderr()).isZero();
    return r.stdout();
  }

  /** Asserts that {@code nbformat.validate} accepts {@code ipynb} as nbformat 4. */
  static void assertValidNotebook(Path dir, String ipynb) throws IOException, InterruptedException {
    Result r =
        run(
            dir,
            ipynb,
            "-c",
            "import nbformat,sys; nbformat.validate(nbformat.reads(sys.stdin.read(), as_version=4))");
    assertThat(r.exit()).as("nbformat.validate: %s", r.stderr()).isZero();
  }

  /** Asserts that the file parses and compiles (every cell function included). */
  static void assertCompiles(Path file) throws IOException, InterruptedException {
    Result r =
        run(
            file.getParent(),
            null,
            "-I",
            "-c",
            "import ast,sys; src=open(sys.argv[1], encoding='utf-8').read(); ast.parse(src);"
                + " compile(src, sys.argv[1], 'exec')",
            file.toString());
    assertThat(r.exit()).as("%s parses and compiles: %s", file, r.stderr()).isZero();
  }
}

package dev.pysandbox.cli;

import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.RunText;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox run FILE | -c CODE}: one run in a fresh sandbox. The code's stdout goes to
 * stdout and its stderr to stderr, as if it ran here; the run's id, status and files are reported
 * on stderr. Exits 0 when the run succeeded, 1 when it failed, 124 when it timed out.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = "Run a Python file or snippet in a fresh sandbox and record it.")
final class RunCommand implements Callable<Integer> {
  static final int EXIT_FAILED = 1;
  static final int EXIT_TIMED_OUT = 124;

  @ParentCommand Main main;

  static final class Source {
    @Parameters(
        index = "0",
        paramLabel = "FILE",
        description = "Python file to run ('-' reads stdin).")
    Path file;

    @Option(names = "-c", paramLabel = "CODE", description = "Code to run.")
    String code;
  }

  @ArgGroup(exclusive = true, multiplicity = "1")
  Source source;

  @Option(names = "--timeout", paramLabel = "SECONDS", description = "Wall-clock limit.")
  Integer timeout;

  @Option(names = "--description", description = "Kept with the run.")
  String description;

  @Option(names = "--json", description = "Print the whole run as JSON on stdout instead.")
  boolean json;

  @Override
  public Integer call() throws IOException {
    String code = source.code != null ? source.code : read(source.file);
    try (DefaultSandboxService service = main.startService()) {
      RunRecord run = service.run(new ExecutionRequest(code, null, description, timeout));
      if (json) {
        System.out.println(Json.writePretty(run));
      } else {
        // The code's own output goes through as it is, as running the script would print it,
        // unless a person's terminal would obey what it holds.
        print(run, System.out, System.err, TerminalText.interactive());
      }
      return exitCode(run);
    }
  }

  /** 0 on success, 124 on timeout, the code's own exit code when it chose one, else 1. */
  static int exitCode(RunRecord run) {
    if (run.status() == RunStatus.SUCCEEDED) {
      return 0;
    }
    if (run.status() == RunStatus.TIMED_OUT) {
      return EXIT_TIMED_OUT;
    }
    Integer code = run.exitCode();
    return code != null && code > 0 && code < 124 ? code : EXIT_FAILED;
  }

  private static String read(Path file) throws IOException {
    if (file.toString().equals("-")) {
      return new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
    }
    if (!Files.isRegularFile(file)) {
      throw PysandboxException.invalid("no such file: " + file);
    }
    return Files.readString(file, StandardCharsets.UTF_8);
  }

  /**
   * @param escape show control characters of what the sandbox wrote as text (see {@link
   *     TerminalText})
   */
  static void print(RunRecord run, PrintStream out, PrintStream err, boolean escape) {
    for (RunText.Part part : RunText.terminal(run, TerminalText::escape, escape)) {
      PrintStream to = part.toStderr() ? err : out;
      to.print(part.text());
      to.flush();
    }
  }
}

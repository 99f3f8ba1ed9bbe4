package dev.pysandbox.cli;

import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.RunText;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pysandbox run FILE | -c CODE}: one run in a fresh sandbox. The code's stdout goes to
 * stdout and its stderr to stderr, as if it ran here; the run's id, status and files are reported
 * on stderr. Exits 0 when the run succeeded, 1 when it failed, 124 when it timed out.
 */
@Command(
    name = "run",
    description = "Run a Python file or snippet in a fresh sandbox and record it.")
final class RunCommand extends ServiceCommand {
  static final int EXIT_FAILED = 1;
  static final int EXIT_TIMED_OUT = 124;

  /** The code: a file (CLI-only), or the operation's code argument. */
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

  @Option(names = "--json", description = "Print the whole run as JSON on stdout instead.")
  boolean json;

  @Option(
      names = "--follow",
      negatable = true,
      description =
          "Print the code's output as it is printed (the default on a terminal); --no-follow"
              + " prints it when the run ends.")
  Boolean follow;

  RunCommand() {
    super(
        OperationOptions.of(Operations.RUN_PYTHON)
            .option("timeout_seconds", "--timeout")
            .option("description")
            .option("tier")
            .option("packages", "-p", "--package"));
  }

  @Override
  public Integer call() throws IOException {
    String code = source.code != null ? source.code : read(source.file);
    Arguments args = args(Map.of("code", code));
    boolean escape = TerminalText.interactive();
    boolean live = !json && (follow != null ? follow : escape);
    try (OperatorService service = startService()) {
      FollowOutput followed = live ? new FollowOutput(System.out, System.err, escape) : null;
      RunRecord run =
          recorded(
              service,
              args,
              () ->
                  OperationCalls.call(
                      Operations.RUN_PYTHON,
                      service,
                      args,
                      followed == null ? RunListener.NONE : followed));
      if (json) {
        printJson(run);
      } else {
        // The code's own output goes through as it is, as running the script would print it,
        // unless a person's terminal would obey what it holds.
        print(run, System.out, System.err, escape, followed == null);
        printNotebook(service, run);
      }
      return exitCode(run);
    }
  }

  /** Where the run's notebooks are, written now if the background writer has not yet. */
  private static void printNotebook(OperatorService service, RunRecord run) {
    try {
      RunRecord r = service.getRun(run.runId(), false, 0, true);
      if (r.notebookPyPath() != null) {
        System.err.println(
            "[pysandbox] notebook: "
                + r.notebookIpynbPath()
                + " (marimo: "
                + r.notebookPyPath()
                + ")");
      }
    } catch (PysandboxException e) {
      System.err.println("[pysandbox] no notebook: " + e.getMessage());
    }
  }

  /** Makes the run and records it in the trajectory as run_python by the CLI. */
  private static RunRecord recorded(
      OperatorService service, Arguments given, Supplier<RunRecord> run) {
    Map<String, Object> args = new LinkedHashMap<>();
    args.put("code", given.string("code"));
    if (given.string("description") != null) {
      args.put("description", given.string("description"));
    }
    if (given.integer("timeout_seconds") != null) {
      args.put("timeout_seconds", given.integer("timeout_seconds"));
    }
    long began = System.nanoTime();
    try {
      RunRecord r = run.get();
      service.recordCall(
          CallRecord.answered(CallRecord.Face.CLI, TOOL, args, r, null, System.nanoTime() - began));
      return r;
    } catch (PysandboxException e) {
      service.recordCall(
          CallRecord.failed(
              CallRecord.Face.CLI, TOOL, args, e.code(), null, System.nanoTime() - began));
      throw e;
    }
  }

  /** The operation {@code run} is, in the trajectory. */
  private static final String TOOL = Operations.RUN_PYTHON.name();

  /** Prints a run's stdout and stderr as its events arrive. */
  record FollowOutput(PrintStream out, PrintStream err, boolean escape) implements RunListener {
    @Override
    public void started(String runId) {}

    @Override
    public boolean wantsEvents() {
      return true;
    }

    @Override
    public synchronized void event(RunEvent event) {
      if (event instanceof RunEvent.Stdout o) {
        write(out, o.text());
      } else if (event instanceof RunEvent.Stderr e) {
        write(err, e.text());
      } else if (event instanceof RunEvent.Lagged l) {
        err.println("[pysandbox: " + l.skippedBytes() + " bytes of output skipped here]");
      }
    }

    private void write(PrintStream to, String text) {
      to.print(escape ? TerminalText.escape(text) : text);
      to.flush();
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

  static String read(Path file) throws IOException {
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
    print(run, out, err, escape, true);
  }

  /**
   * @param withOutput false when the code's stdout and stderr were printed as they came
   */
  static void print(
      RunRecord run, PrintStream out, PrintStream err, boolean escape, boolean withOutput) {
    for (RunText.Part part : RunText.terminal(run, TerminalText::escape, escape, withOutput)) {
      PrintStream to = part.toStderr() ? err : out;
      to.print(part.text());
      to.flush();
    }
  }
}

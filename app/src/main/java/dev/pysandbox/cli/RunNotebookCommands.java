package dev.pysandbox.cli;

import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SessionExport;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code pysandbox runs export|open}: the notebooks of the run history, a session's written as one
 * and a run's opened in an editor on this machine (outside any sandbox: see {@link Open}).
 */
final class RunNotebookCommands {
  private RunNotebookCommands() {}

  @Command(
      name = "export",
      description =
          "Write a session's runs as one notebook and print its path (with --json: the content"
              + " too, when at most 5 MB).")
  static final class Export extends TenantOperationCommand<SessionExport> {
    Export() {
      super(
          OperationOptions.of(Operations.EXPORT_SESSION).positional("session_id").option("format"));
    }

    @Override
    void print(SessionExport e) {
      System.out.println(e.path());
      String program = e.viewCommand().split(" ", 2)[0];
      System.err.printf(
          "%d runs (%d not succeeded); open with: %s%s%n",
          e.runCount(),
          e.failedCount(),
          e.viewCommand(),
          Open.onPath(program)
              ? ""
              : " (" + program + " is not on PATH here: install it, or open the file elsewhere)");
    }
  }

  @Command(
      name = "open",
      description = {
        "Print the command that opens a run's notebook (marimo when installed, else Jupyter;"
            + " with neither, the notebook's path), or run it with --exec.",
        "The editor runs on this machine, outside any sandbox, with your rights: opening the"
            + " notebook runs none of the agent's code (Jupyter never runs cells on open; the"
            + " marimo file tells marimo 0.11.5 and later not to, auto_instantiate = false), but a"
            + " cell you run there runs unconfined. Re-run code in a sandbox with 'pysandbox runs"
            + " rerun' instead."
      })
  static final class Open extends ServiceCommand {
    @Option(
        names = "--exec",
        description =
            "Run the command instead of printing it (the editor opens without running any cell;"
                + " running one runs the agent's code outside the sandbox).")
    boolean exec;

    @Option(names = "--jupyter", description = "Use Jupyter even when marimo is installed.")
    boolean jupyter;

    @Mixin TenantOption tenant;

    Open() {
      super(RunsCommand.RUN_ID);
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
      Arguments args = args(Map.of("include_code", false, "include_notebook_source", true));
      String runId = args.string("run_id");
      try (OperatorService service = openReadOnly()) {
        RunRecord r = OperationCalls.call(Operations.GET_RUN, tenant.of(service), args);
        if (r.notebookPyPath() == null) {
          System.err.println(
              "run " + runId + " is " + r.status().wireName() + ": it has no notebook yet");
          return 1;
        }
        boolean marimo = onPath("marimo");
        boolean notebook = onPath("jupyter");
        List<String> command;
        if (marimo && (!jupyter || !notebook)) {
          command = List.of("marimo", "edit", r.notebookPyPath());
        } else if (notebook) {
          command = List.of("jupyter", "notebook", r.notebookIpynbPath());
        } else {
          // Nothing here opens it: say where it is rather than name a program that is not there.
          System.err.println(
              "neither marimo nor jupyter is on PATH, so nothing here opens it: the notebook is "
                  + r.notebookIpynbPath()
                  + " (Jupyter format: any notebook editor opens it) and "
                  + r.notebookPyPath()
                  + " (marimo format, plain Python); install marimo (pip install marimo) or"
                  + " Jupyter (apt-get install jupyter-notebook) to open it with 'pysandbox runs"
                  + " open --exec'");
          if (exec) {
            return 1;
          }
          System.out.println(r.notebookIpynbPath());
          return 0;
        }
        if (jupyter && !notebook) {
          System.err.println("(jupyter is not on PATH; marimo is)");
        }
        if (!exec) {
          System.out.println(String.join(" ", command));
          return 0;
        }
        return new ProcessBuilder(command).inheritIO().start().waitFor();
      }
    }

    static boolean onPath(String program) {
      String path = System.getenv("PATH");
      if (path == null) {
        return false;
      }
      for (String dir : path.split(File.pathSeparator)) {
        if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
          return true;
        }
      }
      return false;
    }
  }
}

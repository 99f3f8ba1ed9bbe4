package dev.pysandbox.cli;

import dev.pysandbox.api.DeleteResult;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PurgeResult;
import dev.pysandbox.api.RerunRequest;
import dev.pysandbox.api.RunDiff;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SessionExport;
import dev.pysandbox.api.VerifyReport;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox runs rerun|diff|delete|purge|export|open|verify}: what a reviewer does with the
 * run history. Each prints a readable answer, or with {@code --json} what the API returns.
 */
final class RunsAuditCommands {
  private RunsAuditCommands() {}

  @Command(
      name = "rerun",
      mixinStandardHelpOptions = true,
      description = {
        "Run a recorded run again as a new run linked to it (its parent), in a fresh sandbox with"
            + " the original's limits, or in --session.",
        "Exits as 'pysandbox run' does."
      })
  static final class Rerun implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Parameters(paramLabel = "RUN_ID")
    String runId;

    @Option(
        names = "--code-file",
        paramLabel = "FILE",
        description = "Run this file's code instead ('-' reads stdin).")
    Path codeFile;

    @Option(names = "--description", description = "A description instead of the original's.")
    String description;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "A new wall-clock limit.")
    Integer timeout;

    @Option(names = "--session", description = "Run in this session instead.")
    String session;

    @Option(names = "--json", description = "Print the new run as JSON.")
    boolean json;

    @Override
    public Integer call() throws IOException {
      String code = codeFile == null ? null : RunCommand.read(codeFile);
      boolean escape = TerminalText.interactive();
      try (DefaultSandboxService service = runs.main.startService()) {
        RunRecord run =
            service.rerun(
                new RerunRequest(runId, code, description, timeout, session), RunListener.NONE);
        if (json) {
          System.out.println(Json.writePretty(run));
        } else {
          System.err.println(
              "run " + run.runId() + " (re-run of " + runId + "): " + run.status().wireName());
          RunCommand.print(run, System.out, System.err, escape);
        }
        return RunCommand.exitCode(run);
      }
    }
  }

  @Command(
      name = "diff",
      mixinStandardHelpOptions = true,
      description = "Compare a run with another (by default its parent).")
  static final class Diff implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Parameters(paramLabel = "RUN_ID", description = "The 'after' side.")
    String runId;

    @Option(
        names = "--to",
        paramLabel = "RUN_ID",
        description = "The 'before' side (default: the run's parent).")
    String compareTo;

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Mixin TenantOption tenant;

    @Override
    public Integer call() {
      try (DefaultSandboxService service = runs.main.openReadOnly()) {
        RunDiff d = tenant.of(service).diffRuns(runId, compareTo);
        if (json) {
          System.out.println(Json.writePretty(d));
          return 0;
        }
        System.out.println(TerminalText.escape(d.summary()));
        System.out.println("relationship: " + d.relationship().wireName());
        for (RunDiff.FieldChange c : d.changes()) {
          System.out.println(
              "  "
                  + c.field()
                  + ": "
                  + TerminalText.escape(String.valueOf(c.before()))
                  + " -> "
                  + TerminalText.escape(String.valueOf(c.after())));
        }
        RunDiff.ArtifactDiff a = d.artifacts();
        a.added().forEach(p -> System.out.println("  file added:   " + TerminalText.escape(p)));
        a.removed().forEach(p -> System.out.println("  file removed: " + TerminalText.escape(p)));
        a.changed()
            .forEach(c -> System.out.println("  file changed: " + TerminalText.escape(c.path())));
        if (!d.codeDiff().isEmpty()) {
          System.out.println("--- code ---");
          System.out.print(TerminalText.escape(d.codeDiff()));
        }
        if (!d.stdoutDiff().isEmpty()) {
          System.out.println("--- stdout ---");
          System.out.print(TerminalText.escape(d.stdoutDiff()));
        }
        return 0;
      }
    }
  }

  @Command(
      name = "delete",
      mixinStandardHelpOptions = true,
      description =
          "Delete a finished run's record (a tombstone keeps the hash chain whole) and its files.")
  static final class Delete implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Parameters(paramLabel = "RUN_ID")
    String runId;

    @Option(names = "--keep-files", description = "Leave the run's files and notebooks on disk.")
    boolean keepFiles;

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Mixin TenantOption tenant;

    @Override
    public Integer call() {
      try (DefaultSandboxService service = runs.main.openReadOnly()) {
        DeleteResult r = tenant.of(service).deleteRun(runId, !keepFiles);
        if (json) {
          System.out.println(Json.writePretty(r));
        } else {
          System.out.println(
              "deleted "
                  + r.runId()
                  + (r.filesDeleted()
                      ? " and its files (" + r.filesBytes() + " bytes)"
                      : "; its files stay on disk"));
        }
        return 0;
      }
    }
  }

  @Command(
      name = "purge",
      mixinStandardHelpOptions = true,
      description = {
        "Delete finished runs older than some days, with their files.",
        "Counts only unless --execute is given."
      })
  static final class Purge implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Option(
        names = "--older-than-days",
        required = true,
        paramLabel = "DAYS",
        description = "Runs created more than this many days ago.")
    int olderThanDays;

    @Option(names = "--status", description = "Only runs in this state, e.g. failed.")
    String status;

    @Option(names = "--execute", description = "Delete them (without it: a dry run).")
    boolean execute;

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Mixin TenantOption tenant;

    @Override
    public Integer call() {
      try (DefaultSandboxService service = runs.main.openReadOnly()) {
        PurgeResult r =
            tenant
                .of(service)
                .purgeRuns(
                    olderThanDays, status == null ? null : RunStatus.fromWire(status), !execute);
        if (json) {
          System.out.println(Json.writePretty(r));
          return 0;
        }
        System.out.printf(
            "%s %d runs: %d bytes of files, %d of records%s%n",
            r.dryRun() ? "would delete" : "deleted",
            r.runs(),
            r.filesBytes(),
            r.recordBytes(),
            r.more() ? " (more match: run again)" : "");
        if (r.dryRun() && r.runs() > 0) {
          System.out.println("(a dry run: nothing changed; add --execute to delete them)");
        }
        return 0;
      }
    }
  }

  @Command(
      name = "export",
      mixinStandardHelpOptions = true,
      description = "Write a session's runs as one notebook and print its path.")
  static final class Export implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Parameters(paramLabel = "SESSION_ID")
    String sessionId;

    @Option(
        names = "--format",
        defaultValue = "ipynb",
        description = "ipynb or marimo (default: ${DEFAULT-VALUE}).")
    String format;

    @Option(names = "--json", description = "Print JSON (with the content when at most 5 MB).")
    boolean json;

    @Mixin TenantOption tenant;

    @Override
    public Integer call() {
      try (DefaultSandboxService service = runs.main.openReadOnly()) {
        SessionExport e = tenant.of(service).exportSession(sessionId, format);
        if (json) {
          System.out.println(Json.writePretty(e));
          return 0;
        }
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
        return 0;
      }
    }
  }

  @Command(
      name = "open",
      mixinStandardHelpOptions = true,
      description = {
        "Print the command that opens a run's notebook (marimo when installed, else Jupyter;"
            + " with neither, the notebook's path), or run it with --exec.",
        "The editor runs on this machine, outside any sandbox, with your rights: opening the"
            + " notebook runs none of the agent's code (Jupyter never runs cells on open; the"
            + " marimo file tells marimo 0.11.5 and later not to, auto_instantiate = false), but a"
            + " cell you run there runs unconfined. Re-run code in a sandbox with 'pysandbox runs"
            + " rerun' instead."
      })
  static final class Open implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Parameters(paramLabel = "RUN_ID")
    String runId;

    @Option(
        names = "--exec",
        description =
            "Run the command instead of printing it (the editor opens without running any cell;"
                + " running one runs the agent's code outside the sandbox).")
    boolean exec;

    @Option(names = "--jupyter", description = "Use Jupyter even when marimo is installed.")
    boolean jupyter;

    @Mixin TenantOption tenant;

    @Override
    public Integer call() throws IOException, InterruptedException {
      try (DefaultSandboxService service = runs.main.openReadOnly()) {
        RunRecord r = tenant.of(service).getRun(runId, false, 0, true);
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

  @Command(
      name = "verify",
      mixinStandardHelpOptions = true,
      description = {
        "Recompute the tamper-evident hash chain of every run from the records and kept files as"
            + " they are now, and name each run whose record or files changed, and the first"
            + " break.",
        "Exits 0 when everything holds, 1 when something does not."
      })
  static final class Verify implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Override
    public Integer call() {
      try (DefaultSandboxService service = runs.main.openReadOnly()) {
        VerifyReport r = service.verifyRecords();
        if (json) {
          System.out.println(Json.writePretty(r));
          return r.ok() ? 0 : 1;
        }
        for (VerifyReport.Problem p : r.problems()) {
          System.out.printf(
              "link %d  %s  %s: %s%n",
              p.seq(),
              p.runId() == null ? "-" : p.runId(),
              p.kind(),
              TerminalText.escape(p.detail()));
        }
        System.out.printf(
            "%s: %d links (%d tombstones), %d kept files checked; chain head %s%n",
            r.ok() ? "OK" : "CHANGED",
            r.links(),
            r.tombstones(),
            r.files(),
            r.head() == null ? "(empty)" : r.head());
        if (r.firstBreak() != null) {
          System.out.printf(
              "first break: link %d (%s)%n",
              r.firstBreak().seq(), r.firstBreak().runId() == null ? "-" : r.firstBreak().runId());
        }
        return r.ok() ? 0 : 1;
      }
    }
  }
}

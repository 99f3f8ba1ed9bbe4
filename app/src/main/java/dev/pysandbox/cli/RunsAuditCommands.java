package dev.pysandbox.cli;

import dev.pysandbox.api.DeleteResult;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.PurgeResult;
import dev.pysandbox.api.RunDiff;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.VerifyReport;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pysandbox runs rerun|diff|delete|purge|verify}: what a reviewer does with the run history.
 * Each prints a readable answer, or with {@code --json} what the API returns.
 */
final class RunsAuditCommands {
  private RunsAuditCommands() {}

  @Command(
      name = "rerun",
      description = {
        "Run a recorded run again as a new run linked to it (its parent), in a fresh sandbox with"
            + " the original's limits, or in --session.",
        "Exits as 'pysandbox run' does."
      })
  static final class Rerun extends ServiceCommand {
    Rerun() {
      super(
          OperationOptions.of(Operations.RERUN)
              .positional("run_id")
              .option("description")
              .option("timeout_seconds", "--timeout")
              .option("session_id", "--session"));
    }

    @Option(
        names = "--code-file",
        paramLabel = "FILE",
        description = "Run this file's code instead ('-' reads stdin).")
    Path codeFile;

    @Option(names = "--json", description = "Print the new run as JSON.")
    boolean json;

    @Override
    public Integer call() throws IOException {
      Map<String, Object> code = new HashMap<>();
      if (codeFile != null) {
        code.put("code", RunCommand.read(codeFile));
      }
      Arguments args = args(code);
      String runId = args.string("run_id");
      boolean escape = TerminalText.interactive();
      try (OperatorService service = startService()) {
        RunRecord run = OperationCalls.call(Operations.RERUN, service, args, RunListener.NONE);
        if (json) {
          printJson(run);
        } else {
          System.err.println(
              "run " + run.runId() + " (re-run of " + runId + "): " + run.status().wireName());
          RunCommand.print(run, System.out, System.err, escape);
        }
        return RunCommand.exitCode(run);
      }
    }
  }

  @Command(name = "diff", description = "Compare a run with another (by default its parent).")
  static final class Diff extends TenantOperationCommand<RunDiff> {
    Diff() {
      super(
          OperationOptions.of(Operations.DIFF_RUNS)
              .positional("run_id")
              .option("compare_to", "--to"));
    }

    @Override
    void print(RunDiff d) {
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
    }
  }

  @Command(
      name = "delete",
      description =
          "Delete a finished run's record (a tombstone keeps the hash chain whole) and its files.")
  static final class Delete extends TenantOperationCommand<DeleteResult> {
    Delete() {
      super(
          OperationOptions.of(Operations.DELETE_RUN)
              .positional("run_id")
              .off("delete_files", "--keep-files", "Leave the run's files and notebooks on disk."));
    }

    @Override
    void print(DeleteResult r) {
      System.out.println(
          "deleted "
              + r.runId()
              + (r.filesDeleted()
                  ? " and its files (" + r.filesBytes() + " bytes)"
                  : "; its files stay on disk"));
    }
  }

  @Command(
      name = "purge",
      description = {
        "Delete finished runs older than some days, with their files.",
        "Counts only unless --execute is given."
      })
  static final class Purge extends TenantOperationCommand<PurgeResult> {
    Purge() {
      super(
          OperationOptions.of(Operations.PURGE_RUNS)
              .option("older_than_days")
              .option("status")
              .off("dry_run", "--execute", "Delete them (without it: a dry run)."));
    }

    @Override
    void print(PurgeResult r) {
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
    }
  }

  @Command(
      name = "verify",
      description = {
        "Recompute the tamper-evident hash chain of every run from the records and kept files as"
            + " they are now, and name each run whose record or files changed, and the first"
            + " break.",
        "Exits 0 when everything holds, 1 when something does not."
      })
  static final class Verify extends ReportCommand<VerifyReport> {
    @Override
    VerifyReport fetch(OperatorService service, Arguments args) {
      return service.verifyRecords();
    }

    @Override
    int exitCode(VerifyReport r) {
      return r.ok() ? 0 : 1;
    }

    @Override
    void print(VerifyReport r) {
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
    }
  }
}

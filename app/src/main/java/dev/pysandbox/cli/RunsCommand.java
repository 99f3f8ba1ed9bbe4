package dev.pysandbox.cli;

import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunSummary;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code pysandbox runs list|show|watch|rerun|diff|...}: the run history. */
@Command(
    name = "runs",
    description = "Show the run history.",
    subcommands = {
      RunsCommand.ListRuns.class,
      RunsCommand.ShowRun.class,
      RunsCommand.WatchRun.class,
      RunsAuditCommands.Rerun.class,
      RunsAuditCommands.Diff.class,
      RunsAuditCommands.Delete.class,
      RunsAuditCommands.Purge.class,
      RunNotebookCommands.Export.class,
      RunNotebookCommands.Open.class,
      RunsAuditCommands.Verify.class
    })
final class RunsCommand extends CommandGroup {
  @Command(name = "list", description = "List runs, newest first.")
  static final class ListRuns extends ListingCommand<RunPage> {
    private static final String ROW = "%-24s  %-11s  %-24s  %8s  %s%n";

    ListRuns() {
      super(
          OperationOptions.of(Operations.LIST_RUNS)
              .option("limit")
              .option("offset")
              .option("status")
              .option("session_id", "--session"));
    }

    @Override
    RunPage ofEveryTenant(OperatorService service, Arguments args) {
      return service.allRuns(OperationCalls.runQuery(args));
    }

    @Override
    void print(RunPage page) {
      header(ROW, "RUN", "STATUS", "CREATED", "MS", "CODE");
      for (RunSummary r : page.runs()) {
        row(
            ROW,
            r.tenant(),
            r.runId(),
            r.status(),
            r.createdAt(),
            r.durationMs() == null ? "-" : r.durationMs(),
            TerminalText.escape(r.codePreview()));
      }
      System.out.printf("(%d of %d runs)%n", page.runs().size(), page.total());
    }
  }

  @Command(name = "show", description = "Show one run: code, outputs, error, files.")
  static final class ShowRun extends TenantOperationCommand<RunRecord> {
    ShowRun() {
      super(RunsCommand.RUN_ID);
    }

    @Override
    void print(RunRecord run) {
      System.out.println("run:         " + run.runId());
      System.out.println("status:      " + run.status().wireName());
      System.out.println("created:     " + run.createdAt());
      System.out.println(
          "duration:    " + (run.durationMs() == null ? "-" : run.durationMs() + " ms"));
      if (run.description() != null) {
        System.out.println("description: " + TerminalText.escape(run.description()));
      }
      if (run.message() != null) {
        System.out.println("message:     " + TerminalText.escape(run.message()));
      }
      if (run.killReason() != null) {
        System.out.println("stopped by:  " + run.killReason());
      }
      if (run.peakMemoryBytes() != null) {
        System.out.printf(
            "resources:   peak memory %.1f MiB, CPU %d ms%n",
            run.peakMemoryBytes() / (1024.0 * 1024), run.cpuMillis());
      }
      if (!run.limits().isEmpty()) {
        System.out.println("limits:      " + run.limits());
      }
      if (run.tier() != null) {
        System.out.println("tier:        " + run.tier());
      }
      System.out.println("code sha256: " + run.codeHash());
      if (run.parentRunId() != null) {
        System.out.println("re-run of:   " + run.parentRunId());
      }
      System.out.println(
          "ran with:    python "
              + (run.interpreter() == null ? "?" : run.interpreter())
              + ", env "
              + (run.envHash() == null ? "?" : run.envHash().substring(0, 12))
              + ", pysandbox "
              + run.serverVersion()
              + ", backend "
              + run.backend());
      if (run.recordSha256() != null) {
        System.out.println("record:      " + run.recordSha256() + " (pysandbox runs verify)");
      }
      System.out.println("--- code ---");
      System.out.println(TerminalText.escape(run.code().stripTrailing()));
      // Everything the sandbox wrote is escaped: this is a person reading a record.
      RunCommand.print(run, System.out, System.out, true);
    }
  }

  @Command(
      name = "watch",
      description = {
        "Print a run's output and exit with its exit code (as 'pysandbox run' would).",
        "A run still running in a server is followed through the run history: its output is"
            + " printed when it ends."
      })
  static final class WatchRun extends ServiceCommand {
    @Mixin TenantOption tenant;

    WatchRun() {
      super(RunsCommand.RUN_ID);
    }

    @Override
    public Integer call() throws InterruptedException {
      String runId = args().string("run_id");
      try (OperatorService service = openReadOnly()) {
        return RunWatch.watch(
            tenant.of(service), runId, System.out, System.err, TerminalText.interactive());
      }
    }
  }

  /** A run named by its id, as get_run takes it. */
  static final OperationOptions RUN_ID =
      OperationOptions.of(Operations.GET_RUN).positional("run_id");
}

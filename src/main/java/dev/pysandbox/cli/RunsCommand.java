package dev.pysandbox.cli;

import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.RunSummary;
import dev.pysandbox.core.DefaultSandboxService;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code pysandbox runs list|show|watch|rerun|diff|...}: the run history. */
@Command(
    name = "runs",
    mixinStandardHelpOptions = true,
    description = "Show the run history.",
    subcommands = {
      RunsCommand.ListRuns.class,
      RunsCommand.ShowRun.class,
      RunsCommand.WatchRun.class,
      RunsAuditCommands.Rerun.class,
      RunsAuditCommands.Diff.class,
      RunsAuditCommands.Delete.class,
      RunsAuditCommands.Purge.class,
      RunsAuditCommands.Export.class,
      RunsAuditCommands.Open.class,
      RunsAuditCommands.Verify.class
    })
final class RunsCommand implements Runnable {
  @ParentCommand Main main;

  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.err);
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "List runs, newest first.")
  static final class ListRuns implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Option(names = "--limit", defaultValue = "20")
    int limit;

    @Option(names = "--offset", defaultValue = "0")
    int offset;

    @Option(names = "--status", description = "Only runs in this state, e.g. failed.")
    String status;

    @Option(names = "--session", description = "Only runs of this session.")
    String session;

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Mixin TenantScope tenant;

    @Override
    public Integer call() {
      boolean everyTenant = tenant.all();
      try (DefaultSandboxService service = runs.main.openReadOnly()) {
        RunQuery query =
            new RunQuery(
                limit, offset, status == null ? null : RunStatus.fromWire(status), session);
        RunPage page = everyTenant ? service.allRuns(query) : tenant.of(service).listRuns(query);
        if (json) {
          System.out.println(Json.writePretty(page));
          return 0;
        }
        String tenantColumn = everyTenant ? "%-20s  " : "%s";
        System.out.printf(
            tenantColumn + "%-24s  %-11s  %-24s  %8s  %s%n",
            everyTenant ? "TENANT" : "",
            "RUN",
            "STATUS",
            "CREATED",
            "MS",
            "CODE");
        for (RunSummary r : page.runs()) {
          System.out.printf(
              tenantColumn + "%-24s  %-11s  %-24s  %8s  %s%n",
              everyTenant ? r.tenant() : "",
              r.runId(),
              r.status(),
              r.createdAt(),
              r.durationMs() == null ? "-" : r.durationMs(),
              TerminalText.escape(r.codePreview()));
        }
        System.out.printf("(%d of %d runs)%n", page.runs().size(), page.total());
        return 0;
      }
    }
  }

  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "Show one run: code, outputs, error, files.")
  static final class ShowRun implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Parameters(paramLabel = "RUN_ID")
    String runId;

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Mixin TenantOption tenant;

    @Override
    public Integer call() {
      try (DefaultSandboxService service = runs.main.openReadOnly()) {
        RunRecord run = tenant.of(service).getRun(runId, true);
        if (json) {
          System.out.println(Json.writePretty(run));
          return 0;
        }
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
        return 0;
      }
    }
  }

  @Command(
      name = "watch",
      mixinStandardHelpOptions = true,
      description = {
        "Print a run's output and exit with its exit code (as 'pysandbox run' would).",
        "A run still running in a server is followed through the run history: its output is"
            + " printed when it ends."
      })
  static final class WatchRun implements Callable<Integer> {
    @ParentCommand RunsCommand runs;

    @Parameters(paramLabel = "RUN_ID")
    String runId;

    @Mixin TenantOption tenant;

    @Override
    public Integer call() throws InterruptedException {
      try (DefaultSandboxService service = runs.main.openReadOnly()) {
        return RunWatch.watch(
            tenant.of(service), runId, System.out, System.err, TerminalText.interactive());
      }
    }
  }
}

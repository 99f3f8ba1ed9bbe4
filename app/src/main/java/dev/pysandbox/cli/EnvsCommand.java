package dev.pysandbox.cli;

import dev.pysandbox.api.EnvironmentCleanResult;
import dev.pysandbox.api.EnvironmentInfo;
import dev.pysandbox.api.EnvironmentList;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.api.op.Operations;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pysandbox envs}: the cached package environments of the data directory — list them, build
 * one ahead of the runs that need it (with its pip output shown as it comes), remove those unused
 * for a while. Everything printed from an environment is escaped for the terminal.
 */
@Command(
    name = "envs",
    description = "List, build and clean the cached package environments.",
    subcommands = {EnvsCommand.ListEnvs.class, EnvsCommand.Build.class, EnvsCommand.Clean.class})
final class EnvsCommand extends CommandGroup {
  @Command(name = "list", description = "Every environment: key, size, last use, runs, packages.")
  static final class ListEnvs extends ServiceCommand {
    @Option(names = "--json", description = "Print JSON (with each environment's pip freeze).")
    boolean json;

    @Override
    public Integer call() {
      try (OperatorService service = openReadOnly()) {
        EnvironmentList list = service.listEnvironments();
        if (json) {
          return printJson(list);
        }
        System.out.printf(
            "%-32s  %9s  %-30s  %5s  %-6s  %s%n",
            "KEY", "SIZE", "LAST USED", "RUNS", "IN USE", "PACKAGES");
        for (EnvironmentInfo e : list.environments()) {
          System.out.printf(
              "%-32s  %9s  %-30s  %5d  %-6s  %s%n",
              e.key(),
              size(e.sizeBytes()),
              e.lastUsedAt(),
              e.runs(),
              e.inUse() ? "yes" : "no",
              TerminalText.escape(String.join(" ", e.requirements())));
        }
        System.out.printf(
            "(%d environment%s, %s)%n",
            list.environments().size(),
            list.environments().size() == 1 ? "" : "s",
            size(list.totalBytes()));
        return 0;
      }
    }
  }

  @Command(
      name = "build",
      description =
          "Build the environment for these packages now (PEP 508 requirements), showing pip's"
              + " output; an environment that exists already is only shown.")
  static final class Build extends ServiceCommand {
    @Parameters(arity = "1..*", paramLabel = "REQUIREMENT", description = "e.g. tinypkg==1.0")
    List<String> packages;

    @Option(names = "--json", description = "Print the environment as JSON when it is built.")
    boolean json;

    @Override
    public Integer call() {
      long started = System.nanoTime();
      boolean escape = TerminalText.interactive();
      try (OperatorService service = startService()) {
        EnvironmentInfo e =
            service.buildEnvironment(
                packages,
                line ->
                    System.err.printf(
                        "[%6.1fs] %s%n",
                        (System.nanoTime() - started) / 1e9,
                        escape ? TerminalText.escape(line) : line));
        if (json) {
          printJson(e);
        } else {
          System.out.printf(
              "environment %s: %s, %s%n",
              e.key(), size(e.sizeBytes()), String.join(" ", e.requirements()));
          System.out.print(e.pipFreeze());
        }
        return 0;
      }
    }
  }

  @Command(
      name = "clean",
      description =
          "Remove environments unused for --older-than-days days; none a sandbox has. Without"
              + " --yes, only says what it would remove.")
  static final class Clean extends ServiceCommand {

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    Clean() {
      super(
          OperationOptions.of(Operations.CLEAN_ENVIRONMENTS)
              .option("older_than_days")
              .off("dry_run", "--yes", "Remove them (without it: a dry run)."));
    }

    @Override
    public Integer call() {
      Arguments args = args();
      try (OperatorService service = openReadOnly()) {
        EnvironmentCleanResult r =
            OperationCalls.call(Operations.CLEAN_ENVIRONMENTS, service, args);
        if (json) {
          return printJson(r);
        }
        System.out.printf(
            "%s %d environments (%s)%s%n",
            r.dryRun() ? "would remove" : "removed",
            r.removed().size(),
            size(r.freedBytes()),
            r.keptInUse().isEmpty() ? "" : "; kept, in use: " + String.join(" ", r.keptInUse()));
        r.removed().forEach(k -> System.out.println("  " + k));
        if (r.dryRun() && !r.removed().isEmpty()) {
          System.out.println("(a dry run: add --yes to remove them)");
        }
        return 0;
      }
    }
  }

  static String size(long bytes) {
    if (bytes < 1024 * 1024) {
      return (bytes + 1023) / 1024 + " KiB";
    }
    return String.format("%.1f MiB", bytes / (1024.0 * 1024.0));
  }
}

package dev.pysandbox.cli;

import dev.pysandbox.api.EnvironmentCleanResult;
import dev.pysandbox.api.EnvironmentInfo;
import dev.pysandbox.api.EnvironmentList;
import dev.pysandbox.api.Json;
import dev.pysandbox.core.DefaultSandboxService;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox envs}: the cached package environments of the data directory — list them, build
 * one ahead of the runs that need it (with its pip output shown as it comes), remove those unused
 * for a while. Everything printed from an environment is escaped for the terminal.
 */
@Command(
    name = "envs",
    mixinStandardHelpOptions = true,
    description = "List, build and clean the cached package environments.",
    subcommands = {EnvsCommand.ListEnvs.class, EnvsCommand.Build.class, EnvsCommand.Clean.class})
final class EnvsCommand implements Runnable {
  @ParentCommand Main main;

  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.err);
  }

  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "Every environment: key, size, last use, runs, packages.")
  static final class ListEnvs implements Callable<Integer> {
    @ParentCommand EnvsCommand envs;

    @Option(names = "--json", description = "Print JSON (with each environment's pip freeze).")
    boolean json;

    @Override
    public Integer call() {
      try (DefaultSandboxService service = envs.main.openReadOnly()) {
        EnvironmentList list = service.listEnvironments();
        if (json) {
          System.out.println(Json.writePretty(list));
          return 0;
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
      mixinStandardHelpOptions = true,
      description =
          "Build the environment for these packages now (PEP 508 requirements), showing pip's"
              + " output; an environment that exists already is only shown.")
  static final class Build implements Callable<Integer> {
    @ParentCommand EnvsCommand envs;

    @Parameters(arity = "1..*", paramLabel = "REQUIREMENT", description = "e.g. tinypkg==1.0")
    List<String> packages;

    @Option(names = "--json", description = "Print the environment as JSON when it is built.")
    boolean json;

    @Override
    public Integer call() {
      long started = System.nanoTime();
      boolean escape = TerminalText.interactive();
      try (DefaultSandboxService service = envs.main.startService()) {
        EnvironmentInfo e =
            service.buildEnvironment(
                packages,
                line ->
                    System.err.printf(
                        "[%6.1fs] %s%n",
                        (System.nanoTime() - started) / 1e9,
                        escape ? TerminalText.escape(line) : line));
        if (json) {
          System.out.println(Json.writePretty(e));
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
      mixinStandardHelpOptions = true,
      description =
          "Remove environments unused for --older-than-days days; none a sandbox has. Without"
              + " --yes, only says what it would remove.")
  static final class Clean implements Callable<Integer> {
    @ParentCommand EnvsCommand envs;

    @Option(
        names = "--older-than-days",
        defaultValue = "30",
        description = "Remove those unused for this many days (default: ${DEFAULT-VALUE}).")
    int olderThanDays;

    @Option(names = "--yes", description = "Remove them (without it: a dry run).")
    boolean yes;

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Override
    public Integer call() {
      try (DefaultSandboxService service = envs.main.openReadOnly()) {
        EnvironmentCleanResult r = service.cleanEnvironments(olderThanDays, !yes);
        if (json) {
          System.out.println(Json.writePretty(r));
          return 0;
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

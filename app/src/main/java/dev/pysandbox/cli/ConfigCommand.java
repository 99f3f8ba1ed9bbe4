package dev.pysandbox.cli;

import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.config.Setting;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code pysandbox config}: every setting, its value here and where that value came from. */
@Command(name = "config", description = "Show every setting, its value and its source.")
final class ConfigCommand implements Callable<Integer> {
  @ParentCommand Main main;

  @Option(names = "--markdown", description = "Print the settings table for the README.")
  boolean markdown;

  @Override
  public Integer call() {
    if (markdown) {
      System.out.println("| key | environment variable | default | meaning |");
      System.out.println("|---|---|---|---|");
      for (Setting s : Setting.values()) {
        System.out.printf(
            "| `%s` | `%s` | `%s` | %s |%n",
            s.key(),
            s.envName(),
            s.defaultValue().isEmpty() ? "(empty)" : s.defaultValue(),
            s.doc());
      }
      return 0;
    }
    PysandboxConfig config = main.config(Map.of());
    config
        .describe()
        .forEach((k, v) -> System.out.printf("%-16s = %-30s (%s)%n", k, v.value(), v.source()));
    config.warnings().forEach(w -> System.out.println("warning: " + w));
    return 0;
  }
}

package dev.pysandbox.cli;

import dev.pysandbox.config.ConfigSetting;
import dev.pysandbox.config.PysandboxConfig;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox config}: every setting, its value here and where that value came from; of the
 * agent provider's API key, which is no setting, only whether it is set and where from.
 */
@Command(name = "config", description = "Show every setting, its value and its source.")
final class ConfigCommand implements Callable<Integer> {
  @ParentCommand Main main;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--markdown", description = "Print the settings table for the README.")
  boolean markdown;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    if (markdown) {
      out.println("| key | environment variable | default | meaning |");
      out.println("|---|---|---|---|");
      for (ConfigSetting s : ConfigSetting.all()) {
        out.printf(
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
        .forEach((k, v) -> out.printf("%-16s = %-30s (%s)%n", k, v.value(), v.source()));
    out.printf("%-16s = %s%n", "agent_api_key", config.agent().apiKeyStatus());
    config.warnings().forEach(w -> out.println("warning: " + w));
    out.flush();
    return 0;
  }
}

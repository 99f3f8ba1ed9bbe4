package dev.pysandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.Operations;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The command line takes its options from the operations' declarations (issue 25): their help,
 * defaults, required-ness and checks are the declaration's, and no command keeps a default of its
 * own. No sandbox: picocli parses, nothing runs.
 */
@Fast
class OperationOptionsTest {
  private static CommandLine command(String... path) {
    CommandLine c = Main.commandLine();
    for (String name : path) {
      c = c.getSubcommands().get(name);
    }
    return c;
  }

  /** The arguments of the command {@code argv} names, parsed from the root as the CLI parses. */
  private static Arguments parsed(String... argv) {
    CommandLine.ParseResult r = Main.commandLine().parseArgs(argv);
    while (r.hasSubcommand()) {
      r = r.subcommand();
    }
    return ((ServiceCommand) r.commandSpec().userObject()).args();
  }

  /** The tree is built for the subcommand named, past this command's options and their values. */
  @Test
  void theTree_holdsTheNamedSubcommandOnly_orAllWhenNoneIsNamed() {
    assertThat(Main.commandLine("--data-dir", "runs", "envs", "list").getSubcommands())
        .containsOnlyKeys("envs");
    assertThat(
            Main.commandLine("--set=pool_size=0", "--config", "f", "runs", "list").getSubcommands())
        .containsOnlyKeys("runs");
    assertThat(Main.commandLine("--help").getSubcommands()).containsKeys("serve", "runs", "envs");
    assertThat(Main.commandLine("rnus").getSubcommands()).containsKeys("serve", "runs", "envs");
    assertThat(Main.commandLine().getSubcommands()).hasSize(12);
  }

  @Test
  void envsClean_takesTheOperationsDefault_andItsHelp() {
    CommandLine clean = command("envs", "clean");
    OptionSpec days = clean.getCommandSpec().findOption("--older-than-days");

    assertThat(days.defaultValue()).as("no default of the CLI's own").isNull();
    assertThat(days.description()[0])
        .startsWith(Operations.CLEAN_ENVIRONMENTS.param("older_than_days").description())
        .contains("(default: 90)");
    Arguments dry = parsed("envs", "clean");
    assertThat(dry.integer("older_than_days")).isEqualTo(90);
    assertThat(dry.bool("dry_run")).isTrue();
    Arguments yes = parsed("envs", "clean", "--older-than-days", "7", "--yes");
    assertThat(yes.integer("older_than_days")).isEqualTo(7);
    assertThat(yes.bool("dry_run")).isFalse();
  }

  @Test
  void runsList_namesItsOwnFlags_forTheDeclaredArguments() {
    Arguments a = parsed("runs", "list", "--session", "s1", "--limit", "5");
    assertThat(a.string("session_id")).isEqualTo("s1");
    assertThat(a.integer("limit")).isEqualTo(5);
    assertThat(a.integer("offset")).isZero();

    assertThatThrownBy(() -> parsed("runs", "list", "--status", "bogus"))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("unknown status 'bogus'");
  }

  @Test
  void aRequiredArgument_isAUsageErrorOfPicocli() {
    assertThat(command("runs", "purge").getCommandSpec().findOption("--older-than-days").required())
        .isTrue();
    assertThatThrownBy(() -> parsed("runs", "purge"))
        .isInstanceOf(CommandLine.MissingParameterException.class);
  }

  @Test
  void positionalsAndTurnedOffFlags_reachTheOperation() {
    Arguments a = parsed("runs", "delete", "run_0123456789abcdef0123", "--keep-files");
    assertThat(a.string("run_id")).isEqualTo("run_0123456789abcdef0123");
    assertThat(a.bool("delete_files")).isFalse();
    assertThat(parsed("runs", "delete", "run_0123456789abcdef0123").bool("delete_files")).isTrue();
  }
}

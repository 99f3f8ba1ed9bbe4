package dev.pysandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code pysandbox config} through the command's own path (picocli, {@link Main#config}, {@code
 * PysandboxConfig.load}): it says whether the agent provider's API key is set and where from, and
 * never prints the key, wherever the key came from.
 */
@Fast
class ConfigCommandTest {
  private static final String KEY = "sk-test-RECOGNISABLE-4f1c9a7e";

  @TempDir Path dir;

  private record Output(int exit, String out, String err) {}

  private Output config(Map<String, String> environment, String... args) {
    String[] argv = new String[args.length + 3];
    argv[0] = "--data-dir";
    argv[1] = dir.resolve("data").toString();
    System.arraycopy(args, 0, argv, 2, args.length);
    argv[argv.length - 1] = "config";
    CommandLine cli = Main.commandLine(argv);
    ((Main) cli.getCommand()).environment = environment;
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int exit = Main.execute(cli, argv);
    return new Output(exit, out.toString(), err.toString());
  }

  @Test
  void aKeyFromTheEnvironment_isSaidToBeSet_neverShown() {
    Output o = config(Map.of("PYSANDBOX_AGENT_API_KEY", KEY));
    assertThat(o.exit()).as(o.err()).isZero();
    assertThat(o.out())
        .contains("agent_provider")
        .containsPattern("agent_api_key +?= set \\(from PYSANDBOX_AGENT_API_KEY\\)")
        .doesNotContain(KEY);
    assertThat(o.err()).doesNotContain(KEY);
  }

  @Test
  void aKeyFromAFile_isSaidToBeSet_neverShown() throws Exception {
    Path key = Files.writeString(dir.resolve("agent.key"), KEY + "\n");
    Output o = config(Map.of(), "--set", "agent_api_key_file=" + key);
    assertThat(o.exit()).as(o.err()).isZero();
    assertThat(o.out())
        .containsPattern("agent_api_key +?= set \\(from agent_api_key_file\\)")
        .contains(key.toString())
        .doesNotContain(KEY);
  }

  @Test
  void noKey_isSaidToBeNotSet() {
    Output o = config(Map.of());
    assertThat(o.exit()).as(o.err()).isZero();
    assertThat(o.out()).containsPattern("agent_api_key +?= not set");
  }

  @Test
  void aKeyGivenAsAFlag_isRefusedOnOneLine_withoutTheKey() {
    Output o = config(Map.of(), "--set", "agent_api_key=" + KEY);
    assertThat(o.exit()).isNotZero();
    assertThat(o.err())
        .startsWith("pysandbox: invalid_argument: agent_api_key cannot be given as a flag")
        .contains("PYSANDBOX_AGENT_API_KEY")
        .doesNotContain(KEY);
    assertThat(o.out()).doesNotContain(KEY);
  }
}

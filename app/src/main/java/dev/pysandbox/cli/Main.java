package dev.pysandbox.cli;

import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.Version;
import dev.pysandbox.app.ApiKeysFactory;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.config.Setting;
import dev.pysandbox.store.ApiKeys;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * {@code pysandbox}: the command line. Every subcommand shares the configuration options, and
 * inherits (picocli's {@code scope = INHERIT}) {@code --help} and {@code --version} with this
 * command's version, so that no subcommand declares them again.
 */
@Command(
    name = "pysandbox",
    mixinStandardHelpOptions = true,
    scope = ScopeType.INHERIT,
    version = "pysandbox " + Version.VALUE,
    modelTransformer = OperationOptions.Install.class,
    description = "Run Python for AI agents: sandboxed, stateful, recorded.")
public final class Main implements Runnable {
  /**
   * The subcommands, in the order help lists them. Not in the annotation: picocli builds every
   * command it is given up front, and the whole tree (about 60 commands, their options from the
   * operations) was more than half of a CLI call's CPU; {@link #commandLine} builds the one named.
   */
  private static final List<Class<?>> SUBCOMMANDS =
      List.of(
          ServeCommand.class,
          RunCommand.class,
          RunsCommand.class,
          AgentCommand.class,
          SessionsCommand.class,
          LogsCommand.class,
          KeysCommand.class,
          ApprovalsCommand.class,
          DoctorCommand.class,
          ConfigCommand.class,
          EventsCommand.class,
          EnvsCommand.class);

  /** The options of this command that take a value as the next argument. */
  private static final Set<String> VALUED = Set.of("--data-dir", "--python", "--config", "--set");

  @Option(
      names = "--data-dir",
      scope = ScopeType.INHERIT,
      description = "Data directory (default ~/.pysandbox; env PYSANDBOX_DATA_DIR).")
  Path dataDir;

  @Option(
      names = "--python",
      scope = ScopeType.INHERIT,
      description = "Interpreter inside the sandbox (default /usr/bin/python3).")
  Path python;

  @Option(
      names = "--config",
      scope = ScopeType.INHERIT,
      description = "Properties file with settings (default <data-dir>/config.properties).")
  Path configFile;

  @Option(
      names = "--set",
      scope = ScopeType.INHERIT,
      paramLabel = "KEY=VALUE",
      description = "Any setting; see 'pysandbox config'. Repeatable.")
  Map<String, String> settings = new LinkedHashMap<>();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /**
   * The process environment, where settings' {@code PYSANDBOX_*} variables are read; tests set it.
   */
  Map<String, String> environment = System.getenv();

  @Override
  public void run() {
    spec.commandLine().usage(System.err);
  }

  /**
   * What a command other than {@code serve} does not need: a warm pool (it runs at most once) and
   * log lines below warnings on the person's terminal; flags, environment and file still win.
   */
  private static final Map<String, String> COMMAND_DEFAULTS =
      Map.of(Setting.POOL_SIZE.key(), "0", Setting.LOG_LEVEL.key(), "warn");

  /** The service for a command that runs code ({@code run}). */
  OperatorService startService() {
    return Assembly.start(commandConfig());
  }

  /**
   * The service for a command that looks at the data directory or asks its servers to act ({@code
   * runs}, {@code sessions}, {@code doctor}): it cleans nothing up and starts no sandbox.
   */
  OperatorService openReadOnly() {
    return Assembly.openReadOnly(commandConfig());
  }

  /** Where the data directory's files are, for {@code logs}: no core, nothing created. */
  DataLayout dataLayout() {
    return new DataLayout(commandConfig().dataDir());
  }

  /** The API keys of the data directory, for {@code keys}: no core, no sandbox. */
  ApiKeys openApiKeys() {
    return ApiKeysFactory.open(commandConfig(), true);
  }

  /** The configuration of a command other than {@code serve}, with its logging. */
  private PysandboxConfig commandConfig() {
    PysandboxConfig config = config(COMMAND_DEFAULTS);
    Logging.quietHousekeeping(config);
    return config;
  }

  /** The configuration from flags, environment, file and defaults. */
  PysandboxConfig config(Map<String, String> overridesWhenUnset) {
    Map<String, String> flags = new LinkedHashMap<>(settings);
    if (dataDir != null) {
      flags.put(Setting.DATA_DIR.key(), dataDir.toString());
    }
    if (python != null) {
      flags.put(Setting.PYTHON.key(), python.toString());
    }
    Map<String, String> env = environment;
    overridesWhenUnset.forEach(
        (k, v) -> {
          Setting s = Setting.byKey(k);
          if (!flags.containsKey(k) && !env.containsKey(s.envName())) {
            flags.put(k, v);
          }
        });
    PysandboxConfig config = PysandboxConfig.load(flags, env, configFile);
    Logging.apply(config);
    return config;
  }

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  static int execute(String... args) {
    return execute(commandLine(args), args);
  }

  /** Runs {@code args} on {@code cli}, an error of ours printed as one line on its error writer. */
  static int execute(CommandLine cli, String... args) {
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof PysandboxException p) {
            commandLine
                .getErr()
                .println("pysandbox: " + p.code().wireName() + ": " + p.getMessage());
            return p.code().exitCode();
          }
          throw e;
        });
    return cli.execute(args);
  }

  /**
   * The command tree {@code args} need: the subcommand they name and its own subcommands, or every
   * subcommand when they name none that exists (help, a typo picocli answers with suggestions).
   * With no arguments, the whole tree.
   */
  public static CommandLine commandLine(String... args) {
    CommandLine cli = new CommandLine(new Main());
    List<Class<?>> wanted = named(args).map(List::<Class<?>>of).orElse(SUBCOMMANDS);
    for (Class<?> type : wanted) {
      CommandLine sub = new CommandLine(type);
      cli.addSubcommand(sub);
      OperationOptions.Install.install(sub.getCommandSpec());
    }
    return cli;
  }

  /** The subcommand the first argument that is not an option of this command names, if any. */
  private static Optional<Class<?>> named(String[] args) {
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (VALUED.contains(arg)) {
        i++;
      } else if (!arg.startsWith("-")) {
        return SUBCOMMANDS.stream().filter(type -> names(type).contains(arg)).findFirst();
      } else if (VALUED.stream().noneMatch(option -> arg.startsWith(option + "="))) {
        return Optional.empty(); // --help, --version, an unknown option: the whole tree
      }
    }
    return Optional.empty();
  }

  private static List<String> names(Class<?> type) {
    Command command = type.getAnnotation(Command.class);
    List<String> names = new ArrayList<>(List.of(command.aliases()));
    names.add(command.name());
    return names;
  }
}

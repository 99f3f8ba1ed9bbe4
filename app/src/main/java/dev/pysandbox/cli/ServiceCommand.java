package dev.pysandbox.cli;

import dev.pysandbox.api.Json;
import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.op.Arguments;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * A command that works through the data directory's service: how it reaches it (through {@link
 * Main}, directly or through its {@link CommandGroup}), the arguments of the operation it is (see
 * {@link OperationOptions}), and {@code --json}'s printing. Each command adds only what it prints.
 */
abstract class ServiceCommand implements Callable<Integer>, OperationOptions.Bound {
  /** {@link Main}, or the {@link CommandGroup} this is a subcommand of. */
  @ParentCommand Object parent;

  @Spec CommandSpec spec;

  private final OperationOptions options;

  /** A command that is no operation. */
  ServiceCommand() {
    this(null);
  }

  /** A command that is an operation, admitting these of its arguments. */
  ServiceCommand(OperationOptions options) {
    this.options = options;
  }

  @Override
  public final OperationOptions options() {
    return options;
  }

  /** The operation's arguments as given, checked and with their defaults. */
  Arguments args() {
    return options.arguments(spec);
  }

  /** {@link #args()} with what the command worked out itself. */
  Arguments args(Map<String, Object> more) {
    return options.arguments(spec, more);
  }

  final Main main() {
    return parent instanceof CommandGroup group ? group.main : (Main) parent;
  }

  /** The service for a command that only looks or asks servers to act ({@link Main}). */
  final OperatorService openReadOnly() {
    return main().openReadOnly();
  }

  /** The service for a command that runs code or builds an environment. */
  final OperatorService startService() {
    return main().startService();
  }

  /** Prints {@code value} as the API returns it; 0, the exit code of a command that printed it. */
  static int printJson(Object value) {
    System.out.println(Json.writePretty(value));
    return 0;
  }
}

package dev.pysandbox.cli;

import dev.pysandbox.api.OperatorService;
import dev.pysandbox.api.op.Arguments;
import picocli.CommandLine.Option;

/**
 * A command that looks one answer up in the data directory's service and prints it: for a person,
 * or with {@code --json} as the API returns it. Written once so that every such command checks its
 * arguments before the store is opened, prints JSON the same way and exits the same way; a subclass
 * says how it looks the answer up and how the answer reads.
 *
 * @param <T> the answer
 */
abstract class ReportCommand<T> extends ServiceCommand {
  @Option(names = "--json", description = "Print JSON.")
  boolean json;

  /** A command that is no operation. */
  ReportCommand() {}

  /** A command that is an operation, admitting these of its arguments. */
  ReportCommand(OperationOptions options) {
    super(options);
  }

  @Override
  public final Integer call() {
    Arguments args = options() == null ? null : args();
    checkOptions();
    try (OperatorService service = openReadOnly()) {
      T result = fetch(service, args);
      if (json) {
        printJson(jsonOf(result));
      } else {
        print(result);
      }
      return exitCode(result);
    }
  }

  /** Checks what the options say together (before anything is opened); nothing by default. */
  void checkOptions() {}

  /**
   * Looks the answer up.
   *
   * @param args the operation's arguments, or null for a command that is no operation
   */
  abstract T fetch(OperatorService service, Arguments args);

  /** Prints the answer for a person (what a record holds escaped for the terminal). */
  abstract void print(T result);

  /** What {@code --json} prints: the answer as the API returns it, unless a command adds to it. */
  Object jsonOf(T result) {
    return result;
  }

  /** The exit code once the answer is printed: 0 unless the answer is a failed check. */
  int exitCode(T result) {
    return 0;
  }
}

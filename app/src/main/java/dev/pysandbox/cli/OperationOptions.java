package dev.pysandbox.cli;

import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.Param;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * A command's options and parameters taken from the declaration of the operation it is ({@link
 * dev.pysandbox.api.op.Operations}), as REST's routes take theirs: the type, help text, default and
 * whether it is required come from the {@link Param}; the values given are checked and completed by
 * the one parser ({@link Operation#parse}), as MCP's and REST's arguments are. A command names only
 * which arguments it admits and under what flag: {@code --session} for {@code session_id}, a
 * positional {@code RUN_ID}, or a flag that turns a boolean off ({@code --execute} for {@code
 * dry_run}). What only the command line has (--json, --follow, --tenant, a file to read) stays on
 * the command.
 */
final class OperationOptions {
  /**
   * One argument the command admits.
   *
   * @param name its flag ({@code --limit}), or null for a positional
   * @param off for a boolean: the flag gives {@code false} (it turns the declared default off)
   * @param description the help of a flag that turns a boolean off; else the declaration's
   */
  private record Binding(
      Param param, String name, String[] aliases, boolean off, String description) {
    String label() {
      return param.name().toUpperCase(Locale.ROOT);
    }
  }

  private final Operation op;
  private final List<Binding> bindings = new ArrayList<>();

  private OperationOptions(Operation op) {
    this.op = op;
  }

  /** The operation these are arguments of. */
  Operation operation() {
    return op;
  }

  /** The arguments of {@code op} a command admits, added with the methods below. */
  static OperationOptions of(Operation op) {
    return new OperationOptions(op);
  }

  /**
   * An option for the argument {@code param}: {@code --older-than-days} for {@code
   * older_than_days}, or the names given (the first is the one help shows first).
   */
  OperationOptions option(String param, String... names) {
    String[] all = names.length > 0 ? names : new String[] {"--" + param.replace('_', '-')};
    bindings.add(new Binding(declared(param), all[0], all, false, null));
    return this;
  }

  /** A positional parameter for the argument {@code param}, in the order of these calls. */
  OperationOptions positional(String param) {
    bindings.add(new Binding(declared(param), null, new String[0], false, null));
    return this;
  }

  /**
   * A flag that sets the boolean argument {@code param} to false (its declared default is true):
   * {@code --execute} for {@code dry_run}, {@code --keep-files} for {@code delete_files}.
   */
  OperationOptions off(String param, String name, String description) {
    Param p = declared(param);
    if (p.kind() != Param.Kind.BOOLEAN || !Boolean.TRUE.equals(p.defaultValue())) {
      throw new IllegalArgumentException(op.name() + "." + param + " is not a boolean that is on");
    }
    bindings.add(new Binding(p, name, new String[] {name}, true, description));
    return this;
  }

  /** Adds the options and parameters to the command {@code spec}. */
  void addTo(CommandSpec spec) {
    int index = 0;
    for (Binding b : bindings) {
      if (b.name() == null) {
        spec.addPositional(
            PositionalParamSpec.builder()
                .index(String.valueOf(index++))
                .paramLabel(b.label())
                .type(javaType(b.param()))
                .arity(b.param().isRequired() ? "1" : "0..1")
                .required(b.param().isRequired())
                .description(help(b))
                .build());
        continue;
      }
      OptionSpec.Builder o = OptionSpec.builder(b.aliases()).description(help(b));
      Param p = b.param();
      if (p.kind() == Param.Kind.BOOLEAN) {
        o.type(boolean.class).arity("0");
      } else if (p.kind() == Param.Kind.STRING_LIST) {
        o.type(List.class).auxiliaryTypes(String.class).paramLabel(b.label());
      } else {
        o.type(javaType(p)).paramLabel(b.label()).required(p.isRequired());
      }
      spec.addOption(o.build());
    }
  }

  /**
   * The arguments given to the command {@code spec}, with {@code more} (what the command worked out
   * itself, e.g. the code read from a file), parsed against the operation: its defaults filled in.
   *
   * @throws dev.pysandbox.api.PysandboxException {@code invalid_argument} naming the argument
   */
  Arguments arguments(CommandSpec spec, Map<String, Object> more) {
    Map<String, Object> given = new LinkedHashMap<>();
    List<PositionalParamSpec> positionals = spec.positionalParameters();
    for (Binding b : bindings) {
      ArgSpec arg =
          b.name() != null
              ? spec.findOption(b.name())
              : positionals.stream()
                  .filter(x -> x.paramLabel().equals(b.label()))
                  .findFirst()
                  .orElseThrow();
      Object value = arg.getValue();
      if (b.param().kind() == Param.Kind.BOOLEAN) {
        if (Boolean.TRUE.equals(value)) {
          given.put(b.param().name(), !b.off());
        }
      } else if (value != null) {
        given.put(b.param().name(), value);
      }
    }
    given.putAll(more);
    return op.parse(given);
  }

  /** {@link #arguments(CommandSpec, Map)} with nothing more. */
  Arguments arguments(CommandSpec spec) {
    return arguments(spec, Map.of());
  }

  private Param declared(String param) {
    Param p = op.param(param);
    if (p == null) {
      throw new IllegalArgumentException(op.name() + " declares no " + param);
    }
    return p;
  }

  private static Class<?> javaType(Param p) {
    return p.kind().javaType();
  }

  /** The declaration's text (picocli formats it: a % is doubled), with its default. */
  private static String help(Binding b) {
    String text = b.description() != null ? b.description() : b.param().description();
    Object d = b.param().defaultValue();
    // A default the declaration's text already states (timeout_seconds') is not said twice.
    if (b.description() == null
        && d != null
        && b.param().kind() != Param.Kind.BOOLEAN
        && !text.contains("default")) {
      text += " (default: " + d + ")";
    }
    return text.replace("%", "%%");
  }

  /**
   * Adds the options of every command in the tree that is an operation ({@link Bound}), when
   * picocli has built it: {@code @Command(modelTransformer = ...)} on the root.
   */
  static final class Install implements CommandLine.IModelTransformer {
    @Override
    public CommandSpec transform(CommandSpec spec) {
      install(spec);
      return spec;
    }

    static void install(CommandSpec spec) {
      if (spec.userObject() instanceof Bound bound && bound.options() != null) {
        bound.options().addTo(spec);
      }
      spec.subcommands().values().forEach(sub -> install(sub.getCommandSpec()));
    }
  }

  /** A command whose options come from an operation. */
  interface Bound {
    /** Its operation's arguments, or null when it has none here. */
    OperationOptions options();
  }
}

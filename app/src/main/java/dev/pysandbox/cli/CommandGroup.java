package dev.pysandbox.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * A command that only groups others ({@code runs}, {@code sessions}, {@code keys} …): alone, it
 * prints its usage; its subcommands reach the configuration through it.
 */
abstract class CommandGroup implements Runnable {
  @ParentCommand Main main;

  @Spec CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.err);
  }
}

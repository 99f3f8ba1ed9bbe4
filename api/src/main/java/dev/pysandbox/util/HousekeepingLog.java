package dev.pysandbox.util;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The logger of housekeeping reports: what a starting server cleaned up after servers that stopped
 * (runs recorded interrupted, sandboxes killed, cgroups, workspace file systems and containers
 * removed). A server's log keeps them (warnings: someone's server died); a command of the command
 * line other than {@code serve} turns this one logger down, because such a line on a person's
 * terminal reports nothing about the command they ran (issue 23). Failures of the clean-up itself
 * stay on their classes' own loggers, so nothing but the reports goes quiet.
 */
public final class HousekeepingLog {
  /** The logger's name, for the command line's level. */
  public static final String NAME = "dev.pysandbox.housekeeping";

  /** Where the reports go. */
  public static final Logger LOG = LoggerFactory.getLogger(NAME);

  private HousekeepingLog() {}
}

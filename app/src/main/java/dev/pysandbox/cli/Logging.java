package dev.pysandbox.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.util.HousekeepingLog;
import org.slf4j.LoggerFactory;

/** Applies the configured log level (logs always go to stderr, see logback.xml). */
final class Logging {
  private Logging() {}

  static void apply(PysandboxConfig config) {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.toLevel(config.logLevel(), Level.INFO));
  }

  /**
   * For a command other than {@code serve}: the housekeeping reports ({@link HousekeepingLog}: what
   * was cleaned up after stopped servers) stay off the person's terminal unless they asked for more
   * than warnings ({@code log_level=info} or {@code debug}). Errors still show.
   */
  static void quietHousekeeping(PysandboxConfig config) {
    Logger housekeeping = (Logger) LoggerFactory.getLogger(HousekeepingLog.NAME);
    Level asked = Level.toLevel(config.logLevel(), Level.INFO);
    housekeeping.setLevel(asked.isGreaterOrEqual(Level.WARN) ? Level.ERROR : null);
  }
}

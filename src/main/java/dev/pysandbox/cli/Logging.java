package dev.pysandbox.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.pysandbox.config.PysandboxConfig;
import org.slf4j.LoggerFactory;

/** Applies the configured log level (logs always go to stderr, see logback.xml). */
final class Logging {
  private Logging() {}

  static void apply(PysandboxConfig config) {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.toLevel(config.logLevel(), Level.INFO));
  }
}

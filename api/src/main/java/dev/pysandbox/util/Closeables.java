package dev.pysandbox.util;

import org.slf4j.Logger;

/** Closing what may fail to close, where nothing better can be done than to say so. */
public final class Closeables {
  private Closeables() {}

  /**
   * Closes {@code c} (nothing for {@code null}); a failure is logged at debug level, never thrown.
   */
  public static void quietly(AutoCloseable c, Logger log) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (Exception e) {
      log.debug("closing {} failed", c, e);
    }
  }
}

package dev.pysandbox.util;

/** A short wait in a polling loop that an interrupt may cut short. */
public final class Pause {
  private Pause() {}

  /**
   * Sleeps {@code millis}; an interrupt ends the sleep early and stays set on the thread, so the
   * caller's loop (or the next blocking call) sees it.
   */
  public static void millis(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

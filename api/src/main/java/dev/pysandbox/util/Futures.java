package dev.pysandbox.util;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What went wrong inside a future, without the wrappers the future put around it. */
public final class Futures {
  private Futures() {}

  /**
   * The failure itself: {@code t} with every {@link CompletionException} and {@link
   * ExecutionException} around it taken off (a wrapper without a cause is returned as it is).
   */
  public static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }
}

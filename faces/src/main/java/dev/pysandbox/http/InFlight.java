package dev.pysandbox.http;

/**
 * Counts the requests being answered, so that a stop can wait for them. A stream that only waits
 * for the server to speak (an MCP client's GET /mcp) is not counted: it would never end by itself.
 */
final class InFlight {
  private int count;

  synchronized void enter() {
    count++;
  }

  synchronized void exit() {
    if (--count == 0) {
      notifyAll();
    }
  }

  synchronized int count() {
    return count;
  }

  /**
   * Waits until no request is in flight, at most {@code millis}.
   *
   * @return true when none is left
   */
  synchronized boolean awaitIdle(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000;
    while (count > 0) {
      long left = (deadline - System.nanoTime()) / 1_000_000;
      if (left <= 0) {
        return false;
      }
      wait(left);
    }
    return true;
  }
}

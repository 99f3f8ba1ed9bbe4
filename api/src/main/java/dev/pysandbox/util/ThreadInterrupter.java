package dev.pysandbox.util;

/**
 * Interrupts the thread that made it, but only while it is open: what ends a blocking call (a
 * download from a slow origin) when its caller has gone (a client that disconnected, an MCP call
 * cancelled). Closing it clears an interrupt it made, so that the thread (a server's pooled one)
 * goes on uninterrupted; an interrupt from anyone else is left alone.
 */
public final class ThreadInterrupter implements AutoCloseable {
  private final Thread thread = Thread.currentThread();
  private boolean open = true;
  private boolean fired;

  /** Interrupts the thread, unless closed. Any thread may call it. */
  public synchronized void interrupt() {
    if (open && !fired) {
      fired = true;
      thread.interrupt();
    }
  }

  /** Whether {@link #interrupt} did interrupt. */
  public synchronized boolean fired() {
    return fired;
  }

  /** Call on the thread that made it. */
  @Override
  public void close() {
    boolean clear;
    synchronized (this) {
      open = false;
      clear = fired;
    }
    if (clear) {
      Thread.interrupted();
    }
  }
}

package dev.pysandbox.util;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Named daemon threads: the server's own threads never keep the JVM alive (it stops when the face's
 * work is done), and a thread dump says which part of the server each one serves.
 */
public final class DaemonThreads {
  private DaemonThreads() {}

  /** A daemon thread with this name, not started. */
  public static Thread newThread(String name, Runnable task) {
    Thread t = new Thread(task, name);
    t.setDaemon(true);
    return t;
  }

  /** Daemon threads that all bear {@code name} (for single-thread executors). */
  public static ThreadFactory named(String name) {
    return task -> newThread(name, task);
  }

  /** Daemon threads named {@code prefix} and a number counting from 1. */
  public static ThreadFactory numbered(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return task -> newThread(prefix + n.incrementAndGet(), task);
  }
}

package dev.pysandbox.api;

/**
 * Told that a run has events for a {@link Subscription} to take. The core calls it on whatever
 * thread produced the events (the one that reads every sandbox's output), so it must return at
 * once: hand the taking ({@link Subscription#poll}) to a thread of your own.
 */
@FunctionalInterface
public interface EventSink {
  /**
   * Events may be ready: call {@link Subscription#poll} until it finds none. The subscriber polls
   * once after {@link SandboxService#attach} returns, without being told; from then on it is told
   * after a poll found nothing and something new came. A call that finds nothing is harmless.
   */
  void available();
}

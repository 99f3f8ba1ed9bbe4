package dev.pysandbox.egress;

/**
 * Told of every egress attempt once, when it ends (allowed or refused). Called on a proxy thread:
 * an implementation hands the attempt on (to a queue, a store's writer) and returns quickly, and
 * must not throw (an exception is logged and otherwise ignored).
 */
@FunctionalInterface
public interface EgressListener {
  /** A listener that ignores every attempt. */
  EgressListener NONE = attempt -> {};

  /**
   * One attempt has ended.
   *
   * @param attempt what was tried and how it went
   */
  void attempt(EgressAttempt attempt);
}

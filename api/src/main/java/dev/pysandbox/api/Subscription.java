package dev.pysandbox.api;

import java.util.List;

/**
 * A subscriber's place in one run's events ({@link SandboxService#attach}). Taking events is a
 * poll, so a subscriber costs no thread of the core's and a slow one never slows the run: it falls
 * behind the run's bounded buffer instead and is told so ({@link RunEvent.Lagged}). Thread-safe;
 * polls are meant to come from one thread at a time.
 */
public interface Subscription extends AutoCloseable {
  /** The run subscribed to. */
  String runId();

  /**
   * The events ready now, in order, at most {@code maxEvents}: empty when there are none yet (the
   * sink is told when there are), and always empty once {@link RunEvent.Done} has been taken.
   */
  List<RunEvent> poll(int maxEvents);

  /** True once {@link RunEvent.Done} has been taken. */
  boolean finished();

  /** Stops the subscription: the sink is not told anything more. Idempotent. */
  @Override
  void close();
}

package dev.pysandbox.core.runs;

import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunListener;

/**
 * A listener that passes a run's start and events on to the caller's listener, for the core's
 * wrappers that add one thing at the start (the logging context, completing a started run's
 * answer): written once so that each wrapper states only what it adds, and the code's {@code
 * llm_query} calls ({@link #subcall}). What else it passes on (approval questions, preparing lines)
 * each wrapper decides. An interface, so that a wrapper can be a record of what it holds.
 */
interface RelayListener extends RunListener {
  /** The caller's listener, told everything this one is. */
  RunListener listener();

  @Override
  default void started(String runId) {
    listener().started(runId);
  }

  @Override
  default boolean wantsEvents() {
    return listener().wantsEvents();
  }

  @Override
  default void event(RunEvent event) {
    listener().event(event);
  }

  @Override
  default String subcall(String prompt) {
    return listener().subcall(prompt);
  }
}

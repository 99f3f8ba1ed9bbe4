package dev.pysandbox.mcp;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * One request in flight, as its handler and the transport share it: the client may cancel it
 * ({@code notifications/cancelled}) at any time, before or after the handler says what cancelling
 * means for it. The handler's action runs once, on {@code executor}, never on the thread that reads
 * the client's messages.
 */
final class CallHandle {
  /** The transport-context key under which handlers find their call's handle. */
  static final String CONTEXT_KEY = "pysandbox.call";

  private final Executor executor;

  /** Completes when the client cancels; the action given runs on {@link #executor} once it has. */
  private final CompletableFuture<Void> cancelled = new CompletableFuture<>();

  CallHandle(Executor executor) {
    this.executor = executor;
  }

  /** Runs {@code action} when the client cancels this call (at once if it already has). */
  void whenCancelled(Runnable action) {
    cancelled.thenRunAsync(action, executor);
  }

  /** The client cancelled the call (again: nothing more happens). */
  void cancel() {
    cancelled.complete(null);
  }

  boolean cancelled() {
    return cancelled.isDone();
  }
}

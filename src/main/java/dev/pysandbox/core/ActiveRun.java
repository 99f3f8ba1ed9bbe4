package dev.pysandbox.core;

import dev.pysandbox.backend.Sandbox;
import java.util.concurrent.CompletableFuture;

/**
 * A run in flight, as {@code cancel_run} sees it: its sandbox, whether a cancel was asked for, and
 * a future completed when the run has its final status.
 */
final class ActiveRun {
  final String runId;
  final Sandbox sandbox;
  final Session session;
  final CompletableFuture<Void> finished = new CompletableFuture<>();
  private volatile boolean cancelRequested;
  private volatile boolean killedByCancel;

  ActiveRun(String runId, Sandbox sandbox, Session session) {
    this.runId = runId;
    this.sandbox = sandbox;
    this.session = session;
  }

  boolean cancelRequested() {
    return cancelRequested;
  }

  void requestCancel() {
    cancelRequested = true;
  }

  boolean killedByCancel() {
    return killedByCancel;
  }

  void killedByCancel(boolean killed) {
    killedByCancel = killed;
  }
}

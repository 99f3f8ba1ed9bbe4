package dev.pysandbox.core.runs;

import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.core.events.RunEventLog;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.worker.RequestListener;
import java.util.concurrent.CompletableFuture;

/**
 * A run in flight, as {@code cancel_run} sees it: its sandbox, whether a cancel was asked for, and
 * a future completed when the run has its final status.
 */
final class ActiveRun {
  final String runId;
  final String tenant;
  final Session session;
  final RunEventLog events;
  private volatile RunRecord begun;
  private volatile RunRecord end;
  private volatile Sandbox sandbox;
  final CompletableFuture<Void> finished = new CompletableFuture<>();
  private volatile boolean cancelRequested;
  private volatile boolean killedByCancel;
  private volatile String interruptedBy;
  private volatile String cancelledBy;
  private volatile String cancelReason;
  private volatile java.util.List<String> deniedImports = java.util.List.of();
  private volatile RunListener listener = RunListener.NONE;

  /** Registered before the run is recorded, so that a cancel never misses it. */
  ActiveRun(String runId, String tenant, Session session, RunEventLog events) {
    this.runId = runId;
    this.tenant = tenant;
    this.session = session;
    this.events = events;
  }

  /** The run as it was recorded when it began (without its code), or {@code null} before. */
  RunRecord begun() {
    return begun;
  }

  void begun(RunRecord record) {
    begun = record;
  }

  /** The run as it ended (without its code), or {@code null} before. */
  RunRecord end() {
    return end;
  }

  void end(RunRecord record) {
    end = record;
  }

  /** The caller's listener, which answers the code's {@code llm_query} calls. */
  void listener(RunListener l) {
    listener = l;
  }

  /**
   * What the run's {@code exec} request tells and asks: output and displays go to the run's events,
   * {@code llm_query} to the caller's listener ({@link RunListener#subcall}).
   */
  RequestListener requests() {
    return new CodeListener(events, listener);
  }

  /** The sandbox, once the run has one; {@code null} before. */
  Sandbox sandbox() {
    return sandbox;
  }

  void attach(Sandbox sandbox) {
    this.sandbox = sandbox;
  }

  boolean cancelRequested() {
    return cancelRequested;
  }

  /**
   * Asks the run to stop (KeyboardInterrupt first), for {@code reason} (its record says why), or
   * for no reason given when {@code null} (the caller's own cancel_run).
   */
  void requestCancel(String reason) {
    cancelReason = reason;
    cancelRequested = true;
  }

  /** Why a cancel was asked for, as {@link #requestCancel} was told; {@code null} when not said. */
  String cancelReason() {
    return cancelReason;
  }

  /** Why the server stopped this run from outside (shutting down, say), or {@code null}. */
  String interruptedBy() {
    return interruptedBy;
  }

  void interrupt(String reason) {
    interruptedBy = reason;
  }

  /**
   * Modules the sandbox's import policy refused to the code while this run ran (as its runner
   * reported them; empty when none, or when the run ended without the runner's answer).
   */
  java.util.List<String> deniedImports() {
    return deniedImports;
  }

  void deniedImports(java.util.List<String> modules) {
    deniedImports = java.util.List.copyOf(modules);
  }

  /** Why the server cancelled this run itself (a shutdown's grace ran out), or {@code null}. */
  String cancelledBy() {
    return cancelledBy;
  }

  /**
   * The server cancels the run for {@code reason}: it ends {@code cancelled}, its sandbox killed.
   */
  void cancelBecause(String reason) {
    cancelledBy = reason;
    killedByCancel = true;
    cancelRequested = true;
  }

  boolean killedByCancel() {
    return killedByCancel;
  }

  void killedByCancel(boolean killed) {
    killedByCancel = killed;
  }

  private record CodeListener(RequestListener events, RunListener caller)
      implements RequestListener {
    @Override
    public void output(boolean stderr, java.nio.ByteBuffer bytes) {
      events.output(stderr, bytes);
    }

    @Override
    public void display(com.fasterxml.jackson.databind.node.ObjectNode bundle, long frameBytes) {
      events.display(bundle, frameBytes);
    }

    @Override
    public String subcall(String prompt) {
      return caller.subcall(prompt);
    }
  }
}

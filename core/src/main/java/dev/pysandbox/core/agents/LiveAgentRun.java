package dev.pysandbox.core.agents;

import dev.pysandbox.api.agent.AgentEvent;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentStep;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One agent run while it runs: its state as callers see it, its events, who follows them, and what
 * a cancel must stop (the model call in flight, or the code run in flight).
 */
final class LiveAgentRun {
  /** The most events kept per agent run for late followers (each step is two events). */
  static final int MAX_EVENTS = 4_096;

  /** What the loop is doing, so that a cancel knows what to stop. */
  enum Phase {
    OTHER,
    MODEL,
    CODE
  }

  private final CountDownLatch done = new CountDownLatch(1);
  private final List<AgentEvent> events = new ArrayList<>();
  private final List<Consumer<AgentEvent>> watchers = new CopyOnWriteArrayList<>();
  private final List<AgentStep> steps = new ArrayList<>();
  private AgentRunInfo info;
  private long seq;
  private Phase phase = Phase.OTHER;
  private Thread loopThread;
  private String codeRunId;
  private volatile boolean cancelled;

  LiveAgentRun(AgentRunInfo info) {
    this.info = info;
  }

  String id() {
    return info.agentRunId();
  }

  synchronized AgentRunInfo snapshot() {
    return info.withSteps(List.copyOf(steps));
  }

  synchronized AgentRunInfo info() {
    return info;
  }

  synchronized void setInfo(AgentRunInfo info) {
    this.info = info;
  }

  /** Adds or replaces the step with {@code step.index()}. */
  synchronized void putStep(AgentStep step) {
    if (step.index() < steps.size()) {
      steps.set(step.index(), step);
    } else {
      steps.add(step);
    }
  }

  synchronized int nextStepIndex() {
    return steps.size();
  }

  synchronized List<AgentStep> steps() {
    return List.copyOf(steps);
  }

  // -- events ------------------------------------------------------------------------------------

  void emit(String type, AgentStep step, String runId, String answer, AgentRunInfo run) {
    AgentEvent e;
    synchronized (this) {
      e = new AgentEvent(++seq, type, step, runId, answer, run);
      if (events.size() >= MAX_EVENTS) {
        events.remove(0);
      }
      events.add(e);
    }
    for (Consumer<AgentEvent> w : watchers) {
      try {
        w.accept(e);
      } catch (RuntimeException x) {
        watchers.remove(w);
      }
    }
  }

  /** Gives {@code sink} the events after {@code afterSeq} and then each new one. */
  AutoCloseable watch(long afterSeq, Consumer<AgentEvent> sink) {
    List<AgentEvent> past;
    // Registered under the lock that emit() numbers events under: none is lost or given twice.
    Consumer<AgentEvent> guarded;
    synchronized (this) {
      past = events.stream().filter(e -> e.seq() > afterSeq).toList();
      long last = past.isEmpty() ? afterSeq : past.get(past.size() - 1).seq();
      long[] seen = {last};
      guarded =
          e -> {
            synchronized (seen) {
              if (e.seq() <= seen[0]) {
                return;
              }
              seen[0] = e.seq();
            }
            sink.accept(e);
          };
      watchers.add(guarded);
    }
    past.forEach(sink);
    return () -> watchers.remove(guarded);
  }

  // -- cancel ------------------------------------------------------------------------------------

  boolean cancelled() {
    return cancelled;
  }

  /**
   * Marks it cancelled and stops what is in flight: interrupts a model call; returns the code run
   * in flight (for the caller to cancel through the run path), or null.
   */
  synchronized String cancel() {
    cancelled = true;
    if (phase == Phase.MODEL && loopThread != null) {
      loopThread.interrupt();
    }
    return phase == Phase.CODE ? codeRunId : null;
  }

  /** The loop enters a model call (on {@code thread}); false when already cancelled. */
  synchronized boolean enterModel(Thread thread) {
    loopThread = thread;
    phase = Phase.MODEL;
    return !cancelled;
  }

  /** The loop's code run {@code runId} started. */
  synchronized void enterCode(String runId) {
    phase = Phase.CODE;
    codeRunId = runId;
  }

  /** The loop left a model call or a code run; an interrupt meant for the call is cleared. */
  synchronized void leave() {
    phase = Phase.OTHER;
    codeRunId = null;
    Thread.interrupted();
  }

  // -- the end -----------------------------------------------------------------------------------

  void finished() {
    done.countDown();
  }

  boolean isFinished() {
    return done.getCount() == 0;
  }

  /** Waits up to {@code seconds} for the end; true when it ended. */
  boolean await(int seconds) {
    if (seconds <= 0) {
      return isFinished();
    }
    try {
      return done.await(seconds, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return isFinished();
    }
  }
}

package dev.pysandbox.core.agents;

import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.core.audit.SecurityEventLog;
import dev.pysandbox.core.trajectories.TrajectoryLog;
import dev.pysandbox.notebook.Notebooks;
import dev.pysandbox.store.AgentRunStore;
import dev.pysandbox.util.DurableFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes what an agent run does where it is kept: the store (the run and each step), the trajectory
 * (a line per step), the security events (budget stops, refused tool calls) and, at the end, its
 * notebook {@code agent-runs/<id>/notebook.ipynb}. A failed write is logged and the agent run goes
 * on: the live state still answers callers.
 */
final class AgentRecorder {
  private static final Logger log = LoggerFactory.getLogger(AgentRecorder.class);

  private final Supplier<AgentRunStore> store;
  private final TrajectoryLog trajectory;
  private final SecurityEventLog events;
  private final Path agentRunsDir;
  private final String instanceId;
  private final java.util.concurrent.Executor background;
  private final java.util.concurrent.ExecutorService writer =
      java.util.concurrent.Executors.newSingleThreadExecutor(
          dev.pysandbox.util.DaemonThreads.named("pysandbox-agent-store"));

  AgentRecorder(
      Supplier<AgentRunStore> store,
      TrajectoryLog trajectory,
      SecurityEventLog events,
      Path agentRunsDir,
      String instanceId,
      java.util.concurrent.Executor background) {
    this.background = background;
    this.store = store;
    this.trajectory = trajectory;
    this.events = events;
    this.agentRunsDir = agentRunsDir;
    this.instanceId = instanceId;
  }

  /** Records a new agent run; a store that cannot take it fails the start. */
  void started(AgentRunInfo run) {
    store.get().insert(run, instanceId);
  }

  /**
   * Stores a step, in the background: the loop never waits for the disk (the live run answers
   * callers meanwhile), and one writer keeps the writes of every agent run in their order.
   */
  void step(AgentRunInfo run, AgentStep step) {
    write(
        () -> store.get().putStep(run.agentRunId(), step),
        "step " + step.index(),
        run.agentRunId());
    if (step.durationMs() < 0) {
      return; // a step that began: its line is written when it ends
    }
    Map<String, Object> args = new LinkedHashMap<>();
    args.put("agent_run_id", run.agentRunId());
    args.put("step", step.index());
    args.put("kind", step.kind().wireName());
    if (step.tool() != null) {
      args.put("tool", step.tool());
    }
    if (step.tokensIn() != null) {
      args.put("tokens_in", step.tokensIn());
      args.put("tokens_out", step.tokensOut());
    }
    RunStatus status = null;
    if (step.runStatus() != null) {
      try {
        status = dev.pysandbox.api.WireEnum.parse(RunStatus.class, step.runStatus());
      } catch (PysandboxException e) {
        status = null;
      }
    }
    trajectory.record(
        run.tenant(),
        new CallRecord(
            CallRecord.Face.AGENT,
            "agent_" + step.kind().wireName(),
            args,
            run.sessionId(),
            step.runId(),
            null,
            null,
            status,
            step.durationMs() * 1_000_000L));
  }

  /** Stores its state, in the background after its steps (a finished one never changes). */
  void state(AgentRunInfo run) {
    write(() -> store.get().update(run), "state", run.agentRunId());
  }

  private void write(Runnable w, String what, String agentRunId) {
    try {
      writer.execute(
          () -> {
            try {
              w.run();
            } catch (RuntimeException e) {
              log.warn("agent run {}: {} not stored: {}", agentRunId, what, e.toString());
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      log.warn("agent run {}: {} not stored: the server is stopping", agentRunId, what);
    }
  }

  /** Waits up to {@code millis} for the writes queued so far, then stops the writer. */
  void close(long millis) {
    writer.shutdown();
    try {
      if (!writer.awaitTermination(millis, java.util.concurrent.TimeUnit.MILLISECONDS)) {
        log.warn("agent runs: writes still queued after {} ms were dropped", millis);
        writer.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  void securityEvent(
      AgentRunInfo run, SecurityEvent.Kind kind, String runId, Map<String, Object> detail) {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("agent_run_id", run.agentRunId());
    d.putAll(detail);
    events.record(run.tenant(), kind, run.sessionId(), runId, d);
  }

  /** Writes its notebook in the background (its code runs' records are read for it). */
  void notebookLater(AgentRunInfo run, SandboxService service) {
    try {
      background.execute(() -> notebook(run, service));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      notebook(run, service);
    }
  }

  /** Its notebook, with its code runs' real outputs (read through {@code service}). */
  void notebook(AgentRunInfo run, SandboxService service) {
    Map<String, RunRecord> runs = new LinkedHashMap<>();
    for (AgentStep s : run.steps()) {
      if (s.runId() != null && !runs.containsKey(s.runId())) {
        try {
          runs.put(s.runId(), service.getRun(s.runId(), true));
        } catch (RuntimeException e) {
          log.debug("agent run {}: run {} not in its notebook: {}", run.agentRunId(), s.runId(), e);
        }
      }
    }
    try {
      Path dir = notebookDir(run.agentRunId());
      Files.createDirectories(dir);
      DurableFiles.writeReadable(
          dir.resolve("notebook.ipynb"),
          Notebooks.ipynb(run, runs).getBytes(StandardCharsets.UTF_8));
    } catch (IOException | RuntimeException e) {
      log.warn("agent run {}: notebook not written: {}", run.agentRunId(), e.toString());
    }
  }

  Path notebookDir(String agentRunId) {
    return agentRunsDir.resolve(agentRunId);
  }
}

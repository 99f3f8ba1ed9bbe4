package dev.pysandbox.core.runs;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.core.audit.FinalRecords;
import dev.pysandbox.core.audit.Provenance;
import dev.pysandbox.core.audit.SecurityEventLog;
import dev.pysandbox.core.environments.Environments;
import dev.pysandbox.core.events.ListenerFeed;
import dev.pysandbox.core.requests.RequestIds;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.Sha256;
import dev.pysandbox.util.TimeSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The steps every run takes, wherever it runs: it is registered and recorded {@code running} as it
 * begins, executed under its limits, and its final state stored in one write with the security
 * events it gave rise to. Where the sandbox comes from and what happens to its files is the place's
 * (a {@link RunPlace}); the runs in flight are {@link InFlightRuns}'.
 */
public final class RunExecutor {
  private static final Logger log = LoggerFactory.getLogger(RunExecutor.class);

  /**
   * A run that has begun: its plan (and so its id, held as a value), in flight, its record open.
   */
  record Begun(RunPlan plan, ActiveRun active, RunRecord.Builder record) {
    String runId() {
      return plan.runId();
    }
  }

  private final TimeSource clock;
  private final String instanceId;
  private final String backendName;
  private final Supplier<RunStore> store;
  private final Executor blocking;
  private final int cancelGraceSeconds;
  private final long outputMaxBytes;
  private final long outputsMaxBytes;
  private final InFlightRuns inFlight;
  private final Supplier<Provenance> provenance;
  private final SecurityEventLog securityEvents;
  private final FinalRecords records;

  /**
   * @param finished told of each run recorded (notebooks, metrics)
   */
  public RunExecutor(
      TimeSource clock,
      String instanceId,
      String backendName,
      Supplier<RunStore> store,
      Executor blocking,
      int cancelGraceSeconds,
      long outputMaxBytes,
      long outputsMaxBytes,
      InFlightRuns inFlight,
      Supplier<Provenance> provenance,
      Consumer<RunRecord> finished,
      SecurityEventLog securityEvents) {
    this.clock = clock;
    this.instanceId = instanceId;
    this.backendName = backendName;
    this.store = store;
    this.blocking = blocking;
    this.cancelGraceSeconds = cancelGraceSeconds;
    this.outputMaxBytes = outputMaxBytes;
    this.outputsMaxBytes = outputsMaxBytes;
    this.inFlight = inFlight;
    this.provenance = provenance;
    this.securityEvents = securityEvents;
    this.records = new FinalRecords(store, clock, finished);
  }

  /**
   * Begins the planned run: registered for {@code cancel_run} before it is recorded, so that a
   * cancel never finds a running run it cannot reach; a new run is stored {@code running}, a held
   * one's record becomes {@code running}, owned by this server.
   *
   * @param session the run's session, or null
   * @param env a one-shot run's package environment (a session's run has its session's), or null
   * @throws PysandboxException {@code invalid_argument} for an approved run that no longer awaits
   *     approval or runs already
   */
  Begun begin(RunPlan plan, Session session, Environments.Ready env, RunListener listener) {
    boolean approved = plan.opening() instanceof RunPlan.Approved;
    ActiveRun a = inFlight.register(plan.runId(), plan.tenant(), session, approved);
    RunRecord.Builder run;
    try {
      Environments.Ready e = session != null ? session.env : env;
      run =
          plan.opening() instanceof RunPlan.Approved held
              ? reopened(plan, held.stored(), session, e)
              : recorded(plan, (RunPlan.Fresh) plan.opening(), session, e);
    } catch (RuntimeException e) {
      inFlight.release(plan.runId());
      throw e;
    }
    a.begun(run.build().toBuilder().code(null).build());
    a.listener(listener);
    try {
      if (listener.wantsEvents()) {
        ListenerFeed.start(a.events, listener, blocking);
      }
      listener.started(a.runId);
    } catch (RuntimeException e) {
      log.warn("a run listener failed for {}: {}", a.runId, e.toString());
    }
    return new Begun(plan, a, run);
  }

  private RunRecord.Builder recorded(
      RunPlan plan, RunPlan.Fresh fresh, Session session, Environments.Ready env) {
    RunRecord.Builder run =
        provenance
            .get()
            .applyTo(RunRecord.builder())
            .parentRunId(fresh.parentRunId())
            .tenant(plan.tenant())
            .requestId(RequestIds.current())
            .runId(plan.runId())
            .sessionId(session == null ? null : session.id)
            .description(fresh.request().description())
            .status(RunStatus.RUNNING)
            .code(plan.code())
            .codeHash(Sha256.hex(plan.code()))
            .timeoutSeconds(plan.timeoutSeconds())
            .tier(session != null ? session.tier.name() : plan.tier().name())
            .backend(backendName)
            .createdAt(clock.instant().toString());
    withEnvironment(run, env);
    store.get().insert(run.build(), instanceId);
    return run.riskFindings(fresh.findings());
  }

  private RunRecord.Builder reopened(
      RunPlan plan, RunRecord stored, Session session, Environments.Ready env) {
    if (!store.get().startApproved(plan.runId(), instanceId)) {
      throw PysandboxException.invalid("run " + plan.runId() + " no longer awaits approval");
    }
    RunRecord.Builder run =
        stored.toBuilder()
            .status(RunStatus.RUNNING)
            .tenant(plan.tenant())
            .sessionId(session == null ? null : session.id);
    return withEnvironment(run, env);
  }

  private static RunRecord.Builder withEnvironment(RunRecord.Builder run, Environments.Ready env) {
    if (env != null) {
      run.packages(env.requirements())
          .environment(env.key())
          .pipFreeze(env.pipFreeze())
          .envHash(env.envHash());
    }
    return run;
  }

  /**
   * Writes the final states the store could not take when their runs ended.
   *
   * @return how many are still waiting
   */
  public int retryDeferred() {
    return records.retryDeferred();
  }

  /** Records a run that could not start at all, and releases it. */
  void fail(Begun run, String message) {
    RunRecord done = null;
    try {
      done = records.finish(run.runId(), run.record().status(RunStatus.FAILED).message(message));
    } finally {
      ended(run, done);
      inFlight.release(run.runId());
    }
  }

  /** The run is no longer in flight (see {@link InFlightRuns#release}). */
  void release(Begun run) {
    inFlight.release(run.runId());
  }

  /** Notes how the run ended: {@code done}, or the builder's state when finishing failed. */
  private static void ended(Begun run, RunRecord done) {
    run.active().end(done != null ? done : run.record().build().toBuilder().code(null).build());
  }

  /**
   * Executes the run's code in {@code sandbox} under its limits and writes how it went onto the
   * record. A failure inside the server is logged once, here, and the run says what it was.
   *
   * @param workspaceBytesBefore the workspace's size before the run (0 for a fresh sandbox)
   */
  Execution.Outcome execute(Begun begun, Sandbox sandbox, long workspaceBytesBefore) {
    ActiveRun a = begun.active();
    RunRecord.Builder run = begun.record();
    a.attach(sandbox);
    run.limits(sandbox.limits().describe());
    if (a.interruptedBy() != null) {
      sandbox.kill(a.interruptedBy());
      Execution.interrupted(run, a.interruptedBy());
      return new Execution.Outcome(run, true);
    }
    ExecutionWatch.Guard guard =
        new ExecutionWatch.Guard(
            outputMaxBytes,
            outputsMaxBytes,
            workspaceBytesBefore,
            TimeUnit.SECONDS.toMillis(cancelGraceSeconds));
    try {
      Execution.Outcome o =
          Execution.run(a, begun.plan().code(), begun.plan().timeoutSeconds(), guard, clock, run);
      recordDeniedImports(a, run.build());
      return o;
    } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
      // Logged once, here, with its stack; the run says what went wrong in its own words. An Error
      // here (what the sandbox sent overflowed the stack, say) is the run's, not the server's: the
      // run is recorded failed with it, never left running.
      log.error("run {}: the execution failed in the server, killing its sandbox", a.runId, e);
      sandbox.kill("execution error");
      run.status(RunStatus.FAILED).killReason(null).message(FinalRecords.failureMessage(e));
      return new Execution.Outcome(run, true);
    }
  }

  /** One security event per import the sandbox's import policy refused during the run. */
  private void recordDeniedImports(ActiveRun a, RunRecord run) {
    for (String module : a.deniedImports()) {
      Map<String, Object> detail = new LinkedHashMap<>();
      detail.put("module", module);
      detail.put("tier", run.tier());
      securityEvents.record(
          a.tenant, SecurityEvent.Kind.IMPORT_DENIED, run.sessionId(), run.runId(), detail);
    }
  }

  /**
   * Stores the final state and returns what callers see (without the code); a one-shot run is
   * released here, a session's by its place once the session's lock is released.
   */
  RunRecord complete(Begun run, Execution.Outcome o) {
    RunRecord done = null;
    try {
      done = records.finish(run.runId(), run.record());
      return done;
    } finally {
      ended(run, done);
      // Before the run is released: whoever learns that it ended can list its events.
      recordSecurityEvents(run.active(), o);
      if (run.active().session == null) {
        inFlight.release(run.runId());
      }
    }
  }

  /**
   * A run stopped by a limit ({@code kill_reason} set: a timeout too) is {@code limit_stopped_run};
   * a sandbox gone during a run for no limit, no cancel and no stop of the server's (the code
   * exited, crashed or was killed from outside; the launcher died) is {@code sandbox_died}. A run
   * cancelled by its caller is neither.
   */
  private void recordSecurityEvents(ActiveRun a, Execution.Outcome o) {
    try {
      recordSecurityEventsOf(a, o);
    } catch (RuntimeException e) {
      log.warn("the security events of a run could not be recorded: {}", e.toString());
    }
  }

  private void recordSecurityEventsOf(ActiveRun a, Execution.Outcome o) {
    RunRecord r = o.run().build();
    if (r.killReason() != null) {
      Map<String, Object> limits = new LinkedHashMap<>(r.limits());
      limits.put("timeout_seconds", r.timeoutSeconds());
      Map<String, Object> detail = new LinkedHashMap<>();
      detail.put("limit", r.killReason().wireName());
      detail.put("status", r.status().wireName());
      detail.put("message", r.message());
      detail.put("limits", limits);
      detail.put("duration_ms", r.durationMs());
      detail.put("peak_memory_bytes", r.peakMemoryBytes());
      securityEvents.record(
          r.tenant(), SecurityEvent.Kind.LIMIT_STOPPED_RUN, r.sessionId(), r.runId(), detail);
    } else if (o.sandboxGone()
        && (r.status() == RunStatus.FAILED
            // Interrupted by the host (its launcher died), not by the server stopping: that sets
            // interruptedBy, or interrupts the run's thread.
            || (r.status() == RunStatus.INTERRUPTED
                && a.interruptedBy() == null
                && !Thread.currentThread().isInterrupted()))) {
      Map<String, Object> detail = new LinkedHashMap<>();
      detail.put("reason", o.deathReason());
      detail.put("exit_code", r.exitCode());
      securityEvents.record(
          r.tenant(), SecurityEvent.Kind.SANDBOX_DIED, r.sessionId(), r.runId(), detail);
    }
  }
}

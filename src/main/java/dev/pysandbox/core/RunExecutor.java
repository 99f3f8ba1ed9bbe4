package dev.pysandbox.core;

import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.Sha256;
import dev.pysandbox.util.TimeSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs code and records it: the run is stored as {@code running} before it starts, executed under
 * its limits, its files collected, and its final state stored in one write. Runs in flight are
 * registered so that {@code cancel_run} can find them.
 */
final class RunExecutor {
  private static final Logger log = LoggerFactory.getLogger(RunExecutor.class);

  private volatile boolean refusing;
  private final DataLayout layout;
  private final TimeSource clock;
  private final String instanceId;
  private final String backendName;
  private final Supplier<RunStore> store;
  private final Executor blocking;
  private final int cancelGraceSeconds;
  private final long outputMaxBytes;
  private final long outputsMaxBytes;
  private final FileCollection files;
  private final LiveRuns live;
  private final Supplier<Provenance> provenance;
  private final Consumer<RunRecord> finished;
  private final SecurityEventLog securityEvents;
  private final Map<String, ActiveRun> active = new ConcurrentHashMap<>();
  private final FinalRecords records;

  RunExecutor(
      DataLayout layout,
      TimeSource clock,
      String instanceId,
      String backendName,
      Supplier<RunStore> store,
      Executor blocking,
      int cancelGraceSeconds,
      long outputMaxBytes,
      long outputsMaxBytes,
      CollectBudget.Bounds collect,
      TenantStorage tenantStorage,
      LiveRuns live,
      Supplier<Provenance> provenance,
      Consumer<RunRecord> finished,
      SecurityEventLog securityEvents) {
    this.securityEvents = securityEvents;
    this.layout = layout;
    this.clock = clock;
    this.instanceId = instanceId;
    this.backendName = backendName;
    this.store = store;
    this.blocking = blocking;
    this.cancelGraceSeconds = cancelGraceSeconds;
    this.outputMaxBytes = outputMaxBytes;
    this.outputsMaxBytes = outputsMaxBytes;
    this.files =
        new FileCollection(
            layout, clock, blocking, collect, tenantStorage, new KeptBlobs(layout, store));
    this.records = new FinalRecords(store, clock, finished);
    this.live = live;
    this.provenance = provenance;
    this.finished = finished;
  }

  /**
   * A new run record, stored as {@code running}, and registered for {@code cancel_run} before it is
   * stored, so that a cancel never finds a running run it cannot reach.
   */
  RunRecord.Builder begin(
      String tenant,
      ExecutionRequest request,
      int timeoutSeconds,
      Session session,
      RunListener listener) {
    return begin(tenant, request, timeoutSeconds, session, listener, null, List.of(), null, null);
  }

  /**
   * @param parentRunId the run this one re-runs, or null
   * @param findings what the code's analysis found, when it was analysed before running
   * @param tier the tier of the run's sandbox, or null when none is known
   * @param env the package environment of a one-shot run's sandbox (a session's run has its
   *     session's), or null
   */
  RunRecord.Builder begin(
      String tenant,
      ExecutionRequest request,
      int timeoutSeconds,
      Session session,
      RunListener listener,
      String parentRunId,
      List<dev.pysandbox.api.RiskFinding> findings,
      String tier,
      Environments.Ready env) {
    refuseWhenStopping();
    String runId = Ids.newRunId();
    String sessionId = session == null ? null : session.id;
    ActiveRun a = new ActiveRun(runId, tenant, session, live.open(runId, tenant, sessionId));
    active.put(runId, a);
    RunRecord.Builder run;
    try {
      run =
          record(
              tenant,
              runId,
              request,
              timeoutSeconds,
              sessionId,
              parentRunId,
              session != null ? session.tier.name() : tier,
              session != null ? session.env : env);
      run.riskFindings(findings);
    } catch (RuntimeException e) {
      release(runId);
      throw e;
    }
    return begun(a, run, listener);
  }

  /**
   * Begins a run that waited for approval and was approved: its record ({@code awaiting_approval})
   * becomes {@code running}, owned by this server, and it is registered for {@code cancel_run} as a
   * new run is.
   *
   * @param stored the run as recorded, with its code
   * @throws PysandboxException {@code invalid_argument} when it no longer awaits approval
   */
  RunRecord.Builder beginApproved(
      String tenant, RunRecord stored, Session session, RunListener listener) {
    refuseWhenStopping();
    String runId = stored.runId();
    String sessionId = session == null ? null : session.id;
    ActiveRun a = new ActiveRun(runId, tenant, session, live.open(runId, tenant, sessionId));
    if (active.putIfAbsent(runId, a) != null) {
      throw PysandboxException.invalid("run " + runId + " is running already");
    }
    try {
      if (!store.get().startApproved(runId, instanceId)) {
        throw PysandboxException.invalid("run " + runId + " no longer awaits approval");
      }
    } catch (RuntimeException e) {
      release(runId);
      throw e;
    }
    RunRecord.Builder run =
        stored.toBuilder().status(RunStatus.RUNNING).tenant(tenant).sessionId(sessionId);
    return begun(a, run, listener);
  }

  private void refuseWhenStopping() {
    if (refusing) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "the server is stopping and starts no new run; try again on another server or after"
              + " it restarts");
    }
  }

  private RunRecord.Builder begun(ActiveRun a, RunRecord.Builder run, RunListener listener) {
    a.begun(run.build().toBuilder().code(null).build());
    try {
      if (listener.wantsEvents()) {
        ListenerFeed.start(a.events, listener, blocking);
      }
      listener.started(a.runId);
    } catch (RuntimeException e) {
      log.warn("a run listener failed for {}: {}", a.runId, e.toString());
    }
    return run;
  }

  private RunRecord.Builder record(
      String tenant,
      String runId,
      ExecutionRequest request,
      int timeoutSeconds,
      String sessionId,
      String parentRunId,
      String tier,
      Environments.Ready env) {
    RunRecord.Builder run =
        provenance
            .get()
            .applyTo(RunRecord.builder())
            .parentRunId(parentRunId)
            .tenant(tenant)
            .requestId(RequestIds.current())
            .runId(runId)
            .sessionId(sessionId)
            .description(request.description())
            .status(RunStatus.RUNNING)
            .code(request.code())
            .codeHash(Sha256.hex(request.code()))
            .timeoutSeconds(timeoutSeconds)
            .tier(tier)
            .backend(backendName)
            .createdAt(clock.instant().toString());
    if (env != null) {
      run.packages(env.requirements())
          .environment(env.key())
          .pipFreeze(env.pipFreeze())
          .envHash(env.envHash());
    }
    store.get().insert(run.build(), instanceId);
    return run;
  }

  /**
   * Stores the final state and returns what callers see (without the code); see {@link
   * FinalRecords#finish}.
   */
  RunRecord finish(RunRecord.Builder run) {
    return records.finish(run);
  }

  /**
   * Writes the final states the store could not take when their runs ended.
   *
   * @return how many are still waiting
   */
  int retryDeferred() {
    return records.retryDeferred();
  }

  /** Records a run that could not start at all. */
  void fail(RunRecord.Builder run, String message) {
    RunRecord done = null;
    try {
      done = finish(run.status(RunStatus.FAILED).message(message));
    } finally {
      ended(run, done);
      release(run.build().runId());
    }
  }

  /** Notes how the run ended: {@code done}, or the builder's state when finishing failed. */
  private void ended(RunRecord.Builder run, RunRecord done) {
    ActiveRun a = active.get(run.build().runId());
    if (a != null) {
      a.end(done != null ? done : run.build().toBuilder().code(null).build());
    }
  }

  /**
   * The run is no longer in flight: its events end with how it ended (or go, for a run never
   * recorded), and whoever waits for it is told. A one-shot run is released as it ends; a session's
   * by its caller once the session's lock is released, so that whoever learns that the run ended
   * finds the session free.
   */
  void release(String runId) {
    ActiveRun a = active.remove(runId);
    if (a == null) {
      return;
    }
    RunRecord end = a.end();
    try {
      if (end == null) {
        live.drop(a.events);
      } else {
        live.ended(a.events, end);
      }
    } catch (RuntimeException e) {
      log.warn("the events of run {} could not be ended: {}", runId, e.toString());
    } finally {
      a.finished.complete(null);
    }
  }

  /** Runs in flight here (recorded {@code running}, not yet released). */
  int inFlight() {
    return active.size();
  }

  /** Runs in flight here that have no sandbox yet (waiting for a start or an environment). */
  int waitingForSandbox() {
    int n = 0;
    for (ActiveRun a : active.values()) {
      if (a.sandbox() == null) {
        n++;
      }
    }
    return n;
  }

  /** The run as recorded when it began (without its code), while it is in flight here. */
  RunRecord begun(String runId) {
    ActiveRun a = active.get(runId);
    return a == null ? null : a.begun();
  }

  /**
   * Waits until the run has ended here or the time source passes {@code deadlineNanos}, looking
   * every {@link Execution#POLL_MILLIS} ms; for a run not in flight here, one look's pause.
   */
  void awaitEnd(String runId, long deadlineNanos) {
    ActiveRun a = active.get(runId);
    if (a == null) {
      long left = deadlineNanos - clock.nanoTime();
      dev.pysandbox.util.Pause.millis(
          Math.max(0, Math.min(Execution.POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(left))));
      return;
    }
    await(a, deadlineNanos);
  }

  static String viewCommand(String runId) {
    return "pysandbox runs open " + runId;
  }

  // -- one-shot -------------------------------------------------------------------------------

  /** Runs in a fresh sandbox, which is killed afterwards; its files are kept with the run. */
  RunRecord oneShot(RunRecord.Builder run, Sandbox sandbox, String code, int timeout) {
    Execution.Outcome o = execute(run, sandbox, null, code, timeout);
    RunRecord done = null;
    try {
      files.oneShot(sandbox, run, active.get(run.build().runId()));
    } finally {
      // Whatever collecting did (even an Error), the run ends with a record.
      done = complete(run, o);
    }
    return done;
  }

  // -- sessions --------------------------------------------------------------------------------

  /**
   * Runs in a session's sandbox (the caller holds the session's lock). Files the run created or
   * changed are copied to the run's directory; a run that loses its sandbox leaves the session
   * dead.
   */
  RunRecord inSession(
      RunRecord.Builder run,
      Session session,
      Sandbox sandbox,
      String code,
      int timeout,
      SessionManager sessions) {
    String runId = run.build().runId();
    session.running(runId);
    long t0 = clock.nanoTime();
    Execution.Outcome o;
    try {
      o = execute(run, sandbox, session, code, timeout);
    } finally {
      session.running(null);
    }
    long t1 = clock.nanoTime();
    session.countRun();
    if (o.sandboxGone()) {
      sessions.markDead(session, o.deathReason());
    }
    RunRecord done = null;
    long t2;
    try {
      long bytesBefore = session.workspaceBytes();
      files.session(session, sandbox, run, active.get(runId));
      Execution.checkQuotaAfterRun(sandbox, bytesBefore, session.workspaceBytes(), run);
    } finally {
      // Whatever collecting did (even an Error), the run ends with a record.
      t2 = clock.nanoTime();
      done = complete(run, o);
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "run {}: execute {} us, files {} us, finish {} us",
          runId,
          (t1 - t0) / 1000,
          (t2 - t1) / 1000,
          (clock.nanoTime() - t2) / 1000);
    }
    return done;
  }

  // -- execution and cancel ---------------------------------------------------------------------

  private Execution.Outcome execute(
      RunRecord.Builder run, Sandbox sandbox, Session session, String code, int timeout) {
    String runId = run.build().runId();
    ActiveRun a = active.get(runId);
    a.attach(sandbox);
    run.limits(sandbox.limits().describe());
    if (a.interruptedBy() != null) {
      sandbox.kill(a.interruptedBy());
      Execution.interrupted(run, a.interruptedBy());
      return new Execution.Outcome(run, true);
    }
    Execution.Guard guard =
        new Execution.Guard(
            outputMaxBytes,
            outputsMaxBytes,
            session == null ? 0 : session.workspaceBytes(),
            TimeUnit.SECONDS.toMillis(cancelGraceSeconds));
    try {
      Execution.Outcome o = Execution.run(a, code, timeout, guard, clock, run);
      recordDeniedImports(a, run.build());
      return o;
    } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
      // Logged once, here, with its stack; the run says what went wrong in its own words. An Error
      // here (what the sandbox sent overflowed the stack, say) is the run's, not the server's: the
      // run is recorded failed with it, never left running.
      log.error("run {}: the execution failed in the server, killing its sandbox", runId, e);
      sandbox.kill("execution error");
      run.status(RunStatus.FAILED).killReason(null).message(failureMessage(e));
      return new Execution.Outcome(run, true);
    }
  }

  /** One security event per import the sandbox's import policy refused during the run. */
  private void recordDeniedImports(ActiveRun a, RunRecord run) {
    for (String module : a.deniedImports()) {
      Map<String, Object> detail = new java.util.LinkedHashMap<>();
      detail.put("module", module);
      detail.put("tier", run.tier());
      securityEvents.record(
          a.tenant, SecurityEvent.Kind.IMPORT_DENIED, run.sessionId(), run.runId(), detail);
    }
  }

  /** A failure of the server's own, in words: the backend's message, or the exception itself. */
  static String failureMessage(Throwable e) {
    if (e instanceof PysandboxException p && p.code() == ErrorCode.BACKEND_UNAVAILABLE) {
      return "the sandbox could not take the run: " + p.getMessage();
    }
    if (e instanceof StackOverflowError) {
      return "internal error: what the run sent back was too deeply nested for the server to"
          + " handle (StackOverflowError); its output, result and __outputs__ are not kept";
    }
    return "internal error: " + (e.getMessage() == null ? e.toString() : e.getMessage());
  }

  private RunRecord complete(RunRecord.Builder run, Execution.Outcome o) {
    RunRecord done = null;
    try {
      done = finish(run);
      return done;
    } finally {
      ended(run, done);
      // Before the run is released: whoever learns that it ended can list its events.
      recordSecurityEvents(o);
      if (run.build().sessionId() == null) {
        release(run.build().runId());
      }
    }
  }

  /**
   * A run stopped by a limit ({@code kill_reason} set: a timeout too) is {@code limit_stopped_run};
   * a sandbox gone during a run for no limit, no cancel and no stop of the server's (the code
   * exited, crashed or was killed from outside; the launcher died) is {@code sandbox_died}. A run
   * cancelled by its caller is neither.
   */
  private void recordSecurityEvents(Execution.Outcome o) {
    try {
      recordSecurityEventsOf(o);
    } catch (RuntimeException e) {
      log.warn("the security events of a run could not be recorded: {}", e.toString());
    }
  }

  private void recordSecurityEventsOf(Execution.Outcome o) {
    RunRecord r = o.run().build();
    ActiveRun a = active.get(r.runId());
    if (r.killReason() != null) {
      Map<String, Object> limits = new java.util.LinkedHashMap<>(r.limits());
      limits.put("timeout_seconds", r.timeoutSeconds());
      Map<String, Object> detail = new java.util.LinkedHashMap<>();
      detail.put("limit", r.killReason().wireName());
      detail.put("status", r.status().wireName());
      detail.put("message", r.message());
      detail.put("limits", limits);
      detail.put("duration_ms", r.durationMs());
      detail.put("peak_memory_bytes", r.peakMemoryBytes());
      securityEvents.record(
          r.tenant(),
          dev.pysandbox.api.SecurityEvent.Kind.LIMIT_STOPPED_RUN,
          r.sessionId(),
          r.runId(),
          detail);
    } else if (o.sandboxGone()
        && (r.status() == RunStatus.FAILED
            // Interrupted by the host (its launcher died), not by the server stopping: that sets
            // interruptedBy, or interrupts the run's thread.
            || (r.status() == RunStatus.INTERRUPTED
                && (a == null || a.interruptedBy() == null)
                && !Thread.currentThread().isInterrupted()))) {
      Map<String, Object> detail = new java.util.LinkedHashMap<>();
      detail.put("reason", o.deathReason());
      detail.put("exit_code", r.exitCode());
      securityEvents.record(
          r.tenant(),
          dev.pysandbox.api.SecurityEvent.Kind.SANDBOX_DIED,
          r.sessionId(),
          r.runId(),
          detail);
    }
  }

  /**
   * Stops every run in flight from outside (the server is stopping): each is killed and ends {@code
   * interrupted} with {@code reason}; runs about to start end so at once.
   */
  void interruptAll(String reason) {
    for (ActiveRun a : active.values()) {
      a.interrupt(reason);
      Sandbox sandbox = a.sandbox();
      if (sandbox != null) {
        sandbox.kill(reason);
      }
    }
  }

  /**
   * Cancels every run still in flight, for {@code reason} (a shutdown whose grace period ran out):
   * each sandbox is killed and each run ends {@code cancelled} with the reason.
   */
  void cancelAll(String reason) {
    for (ActiveRun a : active.values()) {
      a.cancelBecause(reason);
      Sandbox sandbox = a.sandbox();
      if (sandbox != null) {
        KillOutcome.kill(sandbox, "cancelled");
      }
    }
  }

  /** From now on no run starts: each is refused, retryable, saying the server is stopping. */
  void refuseNew() {
    refusing = true;
  }

  /**
   * Waits until no run is in flight, at most {@code timeoutMillis}.
   *
   * @return the ids of the runs still in flight
   */
  List<String> awaitIdle(long timeoutMillis) {
    long deadline = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    for (ActiveRun a : List.copyOf(active.values())) {
      long left = deadline - clock.nanoTime();
      try {
        a.finished.get(Math.max(0, left), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (Exception e) {
        // still running: reported below
      }
    }
    return List.copyOf(active.keySet());
  }

  /**
   * KeyboardInterrupt first; after the grace period, SIGKILL (the session, if any, dies).
   *
   * @param reason why, for the run's record ("the client disconnected"); {@code null} for the
   *     caller's own cancel_run
   * @return {@code null} when the tenant has no such run running here
   */
  CancelResult cancel(String tenant, String runId, String reason, SessionManager sessions) {
    ActiveRun a = active.get(runId);
    if (a == null || !a.tenant.equals(tenant)) {
      return null;
    }
    a.requestCancel(reason);
    Sandbox sandbox = a.sandbox();
    if (sandbox != null) {
      sandbox.worker().interrupt();
    }
    // Without a sandbox yet, the run interrupts itself as soon as its request is sent.
    if (!await(a, cancelGraceSeconds) && (sandbox = a.sandbox()) != null) {
      a.killedByCancel(true);
      if (a.session != null) {
        sessions.markDead(
            a.session,
            "killed: run "
                + runId
                + " was cancelled and did not stop within "
                + cancelGraceSeconds
                + " s");
      }
      KillOutcome.kill(sandbox, "cancelled");
      if (!await(a, 10)) {
        // The run's own thread records the end (within its collect budget, which the cancel
        // ends too); the cancel has been taken, and says so rather than fail.
        return new CancelResult(
            runId,
            true,
            RunStatus.RUNNING,
            "cancel taken: run "
                + runId
                + " was interrupted and its sandbox killed; it is still being recorded, get_run"
                + " shows how it ended");
      }
    }
    RunRecord r = store.get().get(runId, false).orElse(null);
    if (r == null) {
      return new CancelResult(runId, true, RunStatus.CANCELLED, "cancelled");
    }
    return new CancelResult(runId, true, r.status(), r.message());
  }

  /**
   * Waits at most {@code seconds} of the time source for the run to finish, looking every {@link
   * Execution#POLL_MILLIS} ms (so that a test's moved time is seen at the next look).
   */
  private boolean await(ActiveRun a, int seconds) {
    return await(a, clock.nanoTime() + TimeUnit.SECONDS.toNanos(seconds));
  }

  private boolean await(ActiveRun a, long deadline) {
    while (true) {
      long left = deadline - clock.nanoTime();
      if (left <= 0) {
        return a.finished.isDone();
      }
      try {
        a.finished.get(
            Math.min(left, TimeUnit.MILLISECONDS.toNanos(Execution.POLL_MILLIS)),
            TimeUnit.NANOSECONDS);
        return true;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      } catch (TimeoutException e) {
        // not yet: look at the time again
      } catch (ExecutionException | CancellationException e) {
        return true;
      }
    }
  }
}

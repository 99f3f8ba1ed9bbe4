package dev.pysandbox.core.runs;

import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.core.sessions.Session;
import dev.pysandbox.core.sessions.SessionManager;
import dev.pysandbox.core.sessions.SessionUse;
import dev.pysandbox.util.TimeSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's run's place: the session's sandbox (the session made by the run if it is new), held
 * for the whole run with the session's lock. A run that loses the sandbox leaves the session dead;
 * the files it created or changed are copied to the run's directory. The run is released once the
 * lock is, so that whoever is told it ended finds the session free.
 */
public final class SessionRun implements RunPlace {
  private static final Logger log = LoggerFactory.getLogger(SessionRun.class);

  private final RunExecutor executor;
  private final SessionOpener opener;
  private final SessionManager sessions;
  private final FileCollection files;
  private final TimeSource clock;

  public SessionRun(
      RunExecutor executor,
      SessionOpener opener,
      SessionManager sessions,
      FileCollection files,
      TimeSource clock) {
    this.executor = executor;
    this.opener = opener;
    this.sessions = sessions;
    this.files = files;
    this.clock = clock;
  }

  @Override
  public RunRecord run(RunPlan plan, RunListener listener) {
    Session session = opener.forRun(plan, listener);
    RunExecutor.Begun run = null;
    try {
      try (SessionUse.Lease lease = sessions.lease(session)) {
        run = executor.begin(plan, session, null, listener);
        return inSession(run, session, lease.sandbox());
      }
    } finally {
      if (run != null) {
        // Once the session's lock is released: whoever is told the run ended finds it free.
        executor.release(run);
      }
    }
  }

  private RunRecord inSession(RunExecutor.Begun run, Session session, Sandbox sandbox) {
    session.running(run.runId());
    long t0 = clock.nanoTime();
    Execution.Outcome o;
    try {
      o = executor.execute(run, sandbox, session.workspaceBytes());
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
      files.session(session, sandbox, run.record(), run.active());
      ExecutionWatch.checkQuotaAfterRun(
          sandbox, bytesBefore, session.workspaceBytes(), run.record());
    } finally {
      // Whatever collecting did (even an Error), the run ends with a record.
      t2 = clock.nanoTime();
      done = executor.complete(run, o);
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "run {}: execute {} us, files {} us, finish {} us",
          run.runId(),
          (t1 - t0) / 1000,
          (t2 - t1) / 1000,
          (clock.nanoTime() - t2) / 1000);
    }
    return done;
  }
}

package dev.pysandbox.core.sessions;

import dev.pysandbox.api.Limits;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.config.Tier;
import dev.pysandbox.core.environments.Environments;
import dev.pysandbox.core.files.WorkspaceFiles;
import dev.pysandbox.store.SessionKey;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One session: a sandbox that outlives its executions, and the bookkeeping around it. The lock is
 * held for the whole of one operation (an execution, an upload, a context call), so that a second
 * operation sees {@code session_busy} instead of waiting.
 */
public final class Session {
  public final String tenant;
  public final String id;
  final Instant createdAt;
  final int ttlMinutes;
  final Limits limits;

  /** Fixed when the session is made: its sandbox was started for it. */
  public final Tier tier;

  /** Its sandbox's package environment, fixed when it is made; {@code null} for none. */
  public volatile Environments.Ready env;

  public final CompletableFuture<Sandbox> sandbox = new CompletableFuture<>();
  final ReentrantLock lock = new ReentrantLock();

  private volatile Instant lastUsedAt;
  private volatile String deadReason;
  private volatile boolean closed;
  private volatile dev.pysandbox.api.SessionEnd end;
  private volatile String runningRunId;
  private volatile String lastRunId;
  private volatile int runCount;
  private volatile long workspaceBytes;

  private SessionState recordedState;
  private long recordedAt;
  private boolean recordScheduled;

  /** True when a write to the store is due now: the state changed, or the last one is old. */
  synchronized boolean recordNow(SessionState state, long nowNanos, long minIntervalNanos) {
    boolean due =
        state != recordedState
            || state == SessionState.CLOSED
            || nowNanos - recordedAt >= minIntervalNanos;
    if (due) {
      recordedState = state;
      recordedAt = nowNanos;
    }
    return due;
  }

  /** True when the caller should schedule a deferred write (none is scheduled yet). */
  synchronized boolean scheduleRecord() {
    if (recordScheduled) {
      return false;
    }
    recordScheduled = true;
    return true;
  }

  synchronized void recorded() {
    recordScheduled = false;
  }

  /** The workspace as it was after the last operation, to tell what the next run changed. */
  private volatile Map<String, WorkspaceFiles.FileState> files = Map.of();

  Session(SessionKey key, Instant createdAt, int ttlMinutes, Limits limits, Tier tier) {
    this.tenant = key.tenant();
    this.id = key.id();
    this.limits = limits;
    this.tier = tier;
    this.createdAt = createdAt;
    this.lastUsedAt = createdAt;
    this.ttlMinutes = ttlMinutes;
  }

  SessionState state() {
    if (closed) {
      return SessionState.CLOSED;
    }
    if (deadReason != null) {
      return SessionState.DEAD;
    }
    if (!sandbox.isDone()) {
      return SessionState.STARTING;
    }
    return lock.isLocked() ? SessionState.BUSY : SessionState.IDLE;
  }

  SessionKey key() {
    return new SessionKey(tenant, id);
  }

  public SessionInfo info() {
    SessionInfo info = openInfo();
    dev.pysandbox.api.SessionEnd e = end;
    return e == null ? info : info.withEnded(e);
  }

  private SessionInfo openInfo() {
    return new SessionInfo(
        id,
        state(),
        createdAt.toString(),
        lastUsedAt.toString(),
        runCount,
        workspaceBytes,
        ttlMinutes,
        deadReason,
        limits.describe(),
        tier.name(),
        env == null ? List.of() : env.requirements(),
        env == null ? null : env.key(),
        null,
        null);
  }

  Instant lastUsedAt() {
    return lastUsedAt;
  }

  void touch(Instant now) {
    lastUsedAt = now;
  }

  String deadReason() {
    return deadReason;
  }

  /**
   * @return true when this call made the session dead (it was not yet)
   */
  synchronized boolean die(String reason) {
    if (deadReason == null) {
      deadReason = reason;
      return true;
    }
    return false;
  }

  boolean isClosed() {
    return closed;
  }

  void markClosed() {
    closed = true;
  }

  /** Closes it for good, saying how (the first end said is kept). */
  synchronized void end(dev.pysandbox.api.SessionEnd how) {
    if (end == null) {
      end = how;
    }
    closed = true;
  }

  /** How it ended, or null while it has not (or was closed without saying how). */
  dev.pysandbox.api.SessionEnd end() {
    return end;
  }

  public String runningRunId() {
    return runningRunId;
  }

  public void running(String runId) {
    runningRunId = runId;
    if (runId != null) {
      lastRunId = runId;
    }
  }

  /** The last run begun in it, or null: where a step of the session stands among its runs. */
  String lastRunId() {
    return lastRunId;
  }

  public void countRun() {
    runCount++;
  }

  /** The last snapshot (read at any time; replaced under the lock). */
  public Map<String, WorkspaceFiles.FileState> files() {
    return files;
  }

  /**
   * What its workspace took on disk after the last operation (allocated blocks of everything in it,
   * as the disk quota counts).
   */
  public long workspaceBytes() {
    return workspaceBytes;
  }

  /** Call with the lock held. */
  public void files(WorkspaceFiles.Snapshot now) {
    files = now.files();
    workspaceBytes = now.allocatedBytes();
  }
}

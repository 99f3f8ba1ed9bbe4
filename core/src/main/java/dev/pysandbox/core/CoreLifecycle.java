package dev.pysandbox.core;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.core.files.NativeFs;
import dev.pysandbox.store.SessionKey;
import dev.pysandbox.util.Futures;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core's life: its background work started (the store opened, clean-up after dead servers, the
 * first pool fill, the periodic jobs: idle sessions, close requests, deferred records, approvals)
 * and, within about a second, everything stopped in reverse order. The parts are {@link
 * ServiceWiring}'s.
 */
final class CoreLifecycle {
  private static final Logger log = LoggerFactory.getLogger(CoreLifecycle.class);

  /** How long closing waits for runs in flight to record that they were interrupted. */
  private static final long CLOSE_RUNS_WAIT_MILLIS = 600;

  /**
   * How long a stop may spend deleting its workspaces' directories (empty mount points as root, in
   * a blink); what is left then, the next server on this data directory deletes.
   */
  private static final long SWEEP_MILLIS = 300;

  private final ServiceWiring core;
  private final CompletableFuture<Void> housekeeping = new CompletableFuture<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private boolean backgroundStarted;

  CoreLifecycle(ServiceWiring core) {
    this.core = core;
  }

  /** Opens the store and, unless read-only, cleans up and fills the pool; in the background. */
  synchronized void startBackground() {
    if (backgroundStarted) {
      return;
    }
    backgroundStarted = true;
    core.store.open();
    if (core.readOnly) {
      housekeeping.complete(null);
      return;
    }
    core.audit.start(core.pools.timer);
    core.trajectory.start(
        core.pools.timer, core.pools.blocking, core.config.trajectoryRetentionDays());
    CompletableFuture.runAsync(this::startBackend, core.pools.blocking)
        .whenComplete((v, e) -> complete(housekeeping, v, e));
    core.pools.timer.scheduleWithFixedDelay(this::expireSafely, 30, 30, TimeUnit.SECONDS);
    core.pools.timer.scheduleWithFixedDelay(core.closer::serveRequests, 1, 1, TimeUnit.SECONDS);
    core.pools.timer.scheduleWithFixedDelay(this::retryDeferredSafely, 1, 1, TimeUnit.SECONDS);
    core.pools.timer.scheduleWithFixedDelay(
        () -> core.pools.blocking.execute(core.approvedRuns::tick), 1, 1, TimeUnit.SECONDS);
  }

  /** Waits until start-up housekeeping (orphan cleanup, first pool fill) has run. */
  void awaitStarted() {
    housekeeping.join();
    core.store();
  }

  private static <T> void complete(CompletableFuture<T> f, T value, Throwable error) {
    if (error != null) {
      f.completeExceptionally(Futures.unwrap(error));
    } else {
      f.complete(value);
    }
  }

  private void startBackend() {
    core.cleanup.removeDeadSockets();
    try {
      NativeFs.require();
    } catch (PysandboxException e) {
      log.error("{}: workspaces cannot be read, so runs will fail", e.getMessage());
    }
    if (core.backend.unavailableReason().isPresent()) {
      log.warn("sandbox backend unavailable: {}", core.backend.unavailableReason().get());
      return;
    }
    core.cleanup.reapSandboxes(core.backend);
    core.pool.refill();
  }

  private void retryDeferredSafely() {
    try {
      core.executor.retryDeferred();
    } catch (RuntimeException e) {
      log.warn("writing deferred run results failed: {}", e.getMessage());
    }
  }

  private void expireSafely() {
    try {
      List<SessionKey> expired = core.expiry.expireIdle();
      if (!expired.isEmpty()) {
        log.info("closed idle sessions: {}", expired);
      }
    } catch (RuntimeException e) {
      log.warn("session expiry failed", e);
    }
  }

  /**
   * Stops within about a second: runs in flight end {@code interrupted} with {@code reason}, every
   * sandbox is killed and reaped, this server's cgroups are removed, sessions are recorded closed.
   * Idempotent.
   */
  void close(String reason) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    core.pools.timer.shutdownNow();
    core.agents.close(reason);
    core.backend.stopping();
    core.inFlight.interruptAll(reason);
    core.sessions.closeAll(reason);
    core.spares.close();
    core.pool.close();
    core.analysis.close();
    core.environments.close();
    core.inFlight.awaitIdle(CLOSE_RUNS_WAIT_MILLIS);
    core.journal.close(300);
    core.backend.close();
    core.egress.close();
    if (core.hub != null) {
      core.hub.close();
      core.cleanup.removeOwnWorkspaces(SWEEP_MILLIS);
    }
    retryDeferredSafely();
    core.audit.close();
    core.securityEvents.close();
    core.store
        .ifOpen()
        .ifPresent(
            s -> {
              try {
                // Whatever did not get to record its end in time is recorded interrupted now.
                s.interruptOrphans(instance -> !instance.equals(core.instances.id()));
                s.seal(Integer.MAX_VALUE);
              } catch (RuntimeException e) {
                log.warn("could not record the runs in flight as interrupted: {}", e.getMessage());
              }
              s.close();
            });
    core.trajectory.close();
    core.pools.stopBlocking(200);
    core.instances.close();
  }
}

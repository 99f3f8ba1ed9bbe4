package dev.pysandbox.backend.bwrap;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.backend.HostUser;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.util.Collection;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one launcher helper ({@link LauncherClient}) running for the bwrap backend: starts it at
 * set-up, starts the next one at once when it dies unasked (telling whoever keeps sandboxes ready),
 * and stops it at shutdown, having it unmount every workspace image it or a dead predecessor
 * mounted.
 */
final class LauncherSupervisor {
  private static final Logger log = LoggerFactory.getLogger(LauncherSupervisor.class);

  private final DataLayout layout;
  private final String instanceId;
  private final Executor blocking;
  private volatile Runnable onSandboxesLost = () -> {};
  private BwrapSetup setup;
  private LauncherClient launcher;
  private boolean closed;
  private volatile boolean stopping;

  LauncherSupervisor(DataLayout layout, String instanceId, Executor blocking) {
    this.layout = layout;
    this.instanceId = instanceId;
    this.blocking = blocking;
  }

  void onSandboxesLost(Runnable action) {
    this.onSandboxesLost = Objects.requireNonNull(action, "action");
  }

  /** Starts the first launcher, for sandboxes set up as {@code s}. */
  synchronized LauncherClient start(BwrapSetup s) {
    setup = s;
    launcher = startLauncher(s);
    return launcher;
  }

  /** The running launcher; a new one if the last died. */
  synchronized LauncherClient get() {
    if (closed) {
      throw new IllegalStateException("the bwrap backend is closed");
    }
    if (launcher == null || !launcher.isAlive()) {
      log.warn("the sandbox launcher is gone; starting a new one");
      launcher = startLauncher(setup);
    }
    return launcher;
  }

  /** The launcher, or null once the backend is stopping or closed (it releases images itself). */
  synchronized LauncherClient unlessClosed() {
    return closed || stopping ? null : get();
  }

  synchronized boolean closed() {
    return closed;
  }

  /** See {@code BwrapBackend.stopping}. */
  void stopping() {
    stopping = true;
  }

  private LauncherClient startLauncher(BwrapSetup s) {
    boolean root = HostUser.currentUid() == 0;
    try {
      return LauncherClient.start(
          s.python().path(),
          layout.runtimeDir().resolve(s.launcherName()),
          instanceId,
          root && s.runAs() != null ? s.runAs().uid() : null,
          root && s.runAs() != null ? s.runAs().gid() : null,
          root ? new LauncherClient.Stage(layout.sandboxRoot(), s.visibleRoot()) : null,
          this::launcherDied);
    } catch (IOException e) {
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          "bwrap: cannot start the sandbox launcher: " + e.getMessage(),
          e);
    }
  }

  /**
   * The launcher died with every sandbox in it: start the next one now, not at the next call, and
   * tell whoever keeps sandboxes ready (the warm pool refills at once).
   */
  private void launcherDied() {
    blocking.execute(
        () -> {
          try {
            get();
          } catch (RuntimeException e) {
            log.error("cannot restart the sandbox launcher: {}", e.getMessage());
          }
          onSandboxesLost.run();
        });
  }

  /**
   * Once closed, the launcher releases every image it mounted when its input ends: waits for that
   * (at most {@code millis}), so that the caller finds plain directories.
   */
  void awaitGone(long millis) {
    LauncherClient last;
    synchronized (this) {
      last = launcher;
    }
    if (last != null) {
      last.awaitExit(millis);
    }
  }

  /**
   * Closes: the launcher is asked to release the images of {@code held} sandboxes that a launcher
   * which died before it mounted, then its input ends (it releases its own, unmounting them all in
   * one go); waits about {@code waitMillis} plus a little per image.
   */
  synchronized void close(Collection<BwrapSandbox> held, long waitMillis) {
    closed = true;
    if (launcher == null) {
      return;
    }
    int images = 0;
    for (BwrapSandbox s : held) {
      if (s.image() != null && !s.released()) {
        if (s.launcher() != launcher) {
          launcher.release(s.id(), s.image());
        }
        images++;
      }
    }
    // Deleting an image takes a few milliseconds (more on a busy host): wait for them all (within
    // reason; what is left is deleted by the next server on this data directory).
    launcher.close(Math.min(waitMillis + 20L * images, 10_000));
  }
}

package dev.pysandbox.backend;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.config.DataLayout;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.worker.WorkerConnection;
import dev.pysandbox.worker.WorkerHub;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The set-up skeleton every backend that starts a process tree of its own follows (bwrap,
 * containers), written once: the backend is set up once, lazily, at the first question or start
 * ({@link #setUp()}, its failure the backend's {@link #unavailableReason()}); then each sandbox is
 * made in one order — its workspace (a private directory its user owns), its environment, its
 * egress door, its {@link WorkerConnection} registered with the hub, then the backend's own limits
 * and launch ({@link Launch}) — and waited for until its runner connects and says it is ready. What
 * fails on the way is torn down in reverse; a sandbox that never gets ready is killed and its
 * workspace deleted.
 *
 * @param <S> what the backend found at set-up
 * @param <X> the backend's sandbox
 */
public abstract class AbstractSandboxBackend<S extends BackendSetup, X extends Sandbox>
    implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(AbstractSandboxBackend.class);

  protected final PysandboxConfig config;
  protected final DataLayout layout;
  protected final WorkerHub hub;
  protected final String instanceId;
  protected final Executor blocking;

  /** Only looks ({@code inspectOnly}): starts no helper process and no sandbox. */
  protected final boolean inspectOnly;

  /** Sandboxes started and not yet exited. */
  protected final Map<String, X> live = new ConcurrentHashMap<>();

  private final AtomicLong counter = new AtomicLong();
  private volatile S setup;
  private String unavailable;
  protected volatile boolean closed;

  /** Guards {@link #closed} against {@link #launching}: a close waits for launches under way. */
  private final Object launchLock = new Object();

  private int launching;

  protected AbstractSandboxBackend(BackendParts parts) {
    this.config = parts.config();
    this.layout = parts.layout();
    this.hub = parts.hub();
    this.instanceId = parts.instanceId();
    this.blocking = parts.blocking();
    this.inspectOnly = parts.inspectOnly();
  }

  /**
   * Finds and prepares what every sandbox needs; called once, under this object's lock.
   *
   * @throws PysandboxException (BACKEND_UNAVAILABLE) saying what is missing and how to fix it
   */
  protected abstract S setUp();

  /**
   * Begins one sandbox: reserves what it runs as (a failure here is the caller's answer as it is,
   * not wrapped: no uid left, say). Nothing is made on disk yet.
   */
  protected abstract Launch<X> begin(S setup, String id, SandboxSpec spec, Path workspace);

  /** What a sandbox that did not get ready printed, for the error; empty when nothing. */
  protected String printedBy(X sandbox) {
    return sandbox.worker().partial().stderr().text().strip();
  }

  /**
   * Whether {@link Launch#create} runs on {@code blocking} rather than on the caller's thread: for
   * a backend whose launch waits on another process's answers (a container engine's API), not one
   * that only writes a request down a pipe.
   */
  protected boolean launchesInBackground() {
    return false;
  }

  /** The backend's own part of starting one sandbox, after the skeleton's common steps. */
  public interface Launch<X> {
    /** The host user the sandbox runs as: its workspace and a writable environment are its. */
    HostUser user();

    /** Whether the workspace directory is chowned to {@link #user()} (as root). */
    default boolean ownsWorkspaceDirectory() {
      return true;
    }

    /** Sets its limits and launches it (or makes it, to be started by {@link #run}). */
    X create(WorkerConnection worker, SandboxSpec.Egress.Door egress) throws IOException;

    /** Starts what {@link #create} made, once the backend tracks it; a failure discards it. */
    default void run(X sandbox) throws IOException {}

    /** Undoes what {@link #create} began when it failed (its own parts only). */
    void undo();

    /** When the sandbox has exited: closes what only it used. */
    default void ended() {}
  }

  /** The set-up, or null before it (or when it failed). */
  protected final S setup() {
    return setup;
  }

  /** What confines the sandboxes, read off the set-up; empty before it (or when it failed). */
  @Override
  public final Optional<Map<String, Object>> confinement() {
    S s = setup();
    return s == null ? Optional.empty() : confinementOf(s);
  }

  /** What confines this backend's sandboxes, given its set-up; empty when it tells nothing. */
  protected Optional<Map<String, Object>> confinementOf(S setup) {
    return Optional.empty();
  }

  @Override
  public final synchronized Optional<String> unavailableReason() {
    if (setup == null && unavailable == null) {
      try {
        setup = setUp();
      } catch (PysandboxException e) {
        unavailable = e.getMessage();
      }
    }
    return Optional.ofNullable(unavailable);
  }

  @Override
  public final Optional<InterpreterInfo> interpreter() {
    S s = setup;
    return s == null ? Optional.empty() : Optional.of(s.python());
  }

  @Override
  public final Optional<String> sandboxUsers() {
    S s = setup;
    return s == null ? Optional.empty() : Optional.of(s.users());
  }

  @Override
  public final CompletableFuture<Sandbox> start(SandboxSpec spec) {
    if (inspectOnly) {
      return CompletableFuture.failedFuture(
          new IllegalStateException(
              "this " + name() + " backend only inspects; it starts no sandbox"));
    }
    Optional<String> reason = unavailableReason();
    if (reason.isPresent()) {
      return CompletableFuture.failedFuture(
          new PysandboxException(ErrorCode.BACKEND_UNAVAILABLE, reason.get()));
    }
    synchronized (launchLock) {
      if (closed) {
        return CompletableFuture.failedFuture(
            new PysandboxException(
                ErrorCode.BACKEND_UNAVAILABLE, name() + ": the backend is closed"));
      }
      launching++;
    }
    S s = setup;
    String id = SandboxIds.of(instanceId, counter.incrementAndGet());
    if (launchesInBackground()) {
      try {
        return CompletableFuture.supplyAsync(() -> launchCounted(s, id, spec), blocking)
            .thenCompose(this::awaitReady);
      } catch (RuntimeException e) { // the executor refused it: it never runs
        launched();
        return CompletableFuture.failedFuture(e);
      }
    }
    X sandbox;
    try {
      sandbox = launchCounted(s, id, spec);
    } catch (PysandboxException e) {
      return CompletableFuture.failedFuture(e);
    }
    return awaitReady(sandbox);
  }

  private X launchCounted(S s, String id, SandboxSpec spec) {
    try {
      return launch(s, id, spec);
    } finally {
      launched();
    }
  }

  private void launched() {
    synchronized (launchLock) {
      launching--;
      launchLock.notifyAll();
    }
  }

  /**
   * Closes the backend to new sandboxes and waits up to {@code waitMillis} for the launches under
   * way to be tracked (or to fail), so that a close sees every sandbox: one made while a close
   * looked would outlive the server.
   *
   * @return the sandboxes live then
   */
  protected final List<X> stopLaunching(long waitMillis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
    synchronized (launchLock) {
      closed = true;
      long left;
      while (launching > 0 && (left = deadline - System.nanoTime()) > 0) {
        try {
          TimeUnit.NANOSECONDS.timedWait(launchLock, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      if (launching > 0) {
        log.warn("{}: {} sandbox launches still under way at close", name(), launching);
      }
    }
    return List.copyOf(live.values());
  }

  private X launch(S s, String id, SandboxSpec spec) {
    Path workspace = layout.workspacesDir().resolve(id);
    Launch<X> launch = begin(s, id, spec, workspace);
    boolean root = HostUser.currentUid() == 0;
    HostUser user = launch.user();
    SandboxSpec.Egress.Door egress = null;
    WorkerConnection worker = null;
    X sandbox = null;
    try {
      Files.createDirectory(workspace);
      Files.setPosixFilePermissions(workspace, PosixFilePermissions.fromString("rwx------"));
      if (root && launch.ownsWorkspaceDirectory()) {
        chown(workspace, user);
      }
      SandboxSpec.Environment env = spec.environment();
      if (env != null && env.writable() && root) {
        chown(env.dir(), user);
      }
      if (spec.egress() != null) {
        egress = spec.egress().open(id);
      }
      worker = hub.expect(id, spec.outputLimit(), spec.idleOutputMax());
      sandbox = launch.create(worker, egress);
      track(id, sandbox, egress, launch);
      launch.run(sandbox);
      return sandbox;
    } catch (IOException | RuntimeException e) {
      if (sandbox != null) {
        discard(sandbox); // its end closes its doors
      } else {
        launch.undo();
        if (egress != null) {
          egress.close();
        }
        if (worker != null) {
          worker.close("failed to start");
        }
        deleteQuietly(workspace);
      }
      throw new PysandboxException(
          ErrorCode.BACKEND_UNAVAILABLE,
          name() + ": cannot start sandbox " + id + ": " + e.getMessage(),
          e);
    }
  }

  private static void chown(Path path, HostUser user) throws IOException {
    Files.setAttribute(path, "unix:uid", user.uid(), LinkOption.NOFOLLOW_LINKS);
    Files.setAttribute(path, "unix:gid", user.gid(), LinkOption.NOFOLLOW_LINKS);
  }

  /** Tracks a made sandbox until it exits; called before it runs. */
  protected void track(String id, X sandbox, SandboxSpec.Egress.Door egress, Launch<X> launch) {
    live.put(id, sandbox);
    sandbox
        .exited()
        .whenComplete(
            (exit, err) -> {
              live.remove(id);
              if (egress != null) {
                egress.close();
              }
              launch.ended();
            });
  }

  private CompletableFuture<Sandbox> awaitReady(X sandbox) {
    long timeout = config.startupTimeoutSeconds();
    return sandbox
        .worker()
        .ready()
        .orTimeout(timeout, TimeUnit.SECONDS)
        .handle(
            (ready, err) -> {
              if (err == null) {
                return (Sandbox) sandbox;
              }
              String printed = printedBy(sandbox);
              discard(sandbox);
              String why =
                  err instanceof TimeoutException || err.getCause() instanceof TimeoutException
                      ? "not ready after " + timeout + " s (startup_timeout)"
                      : "its runner stopped before it was ready";
              throw new PysandboxException(
                  ErrorCode.BACKEND_UNAVAILABLE,
                  name()
                      + ": sandbox "
                      + sandbox.id()
                      + " "
                      + why
                      + (printed.isEmpty() ? "" : "; it printed: " + printed));
            });
  }

  /** A sandbox that did not start: killed, its workspace released and deleted, off this thread. */
  private void discard(X sandbox) {
    sandbox
        .kill("failed to start")
        .whenCompleteAsync(
            (report, err) -> {
              sandbox.releaseWorkspace();
              deleteQuietly(sandbox.workspace());
            },
            blocking);
  }

  /** Deletes an empty directory (or a file); what stays is logged, not thrown. */
  protected static void deleteQuietly(Path dir) {
    try {
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      log.debug("{} stays: {}", dir, e.toString());
    }
  }
}

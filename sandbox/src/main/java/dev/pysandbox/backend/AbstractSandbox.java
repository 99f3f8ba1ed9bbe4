package dev.pysandbox.backend;

import dev.pysandbox.api.Limits;
import dev.pysandbox.worker.WorkerConnection;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What every sandbox a backend starts as a process tree of its own has alike (bwrap's and the
 * containers'), written once: its id, workspace, runner connection, limits and host user, and a
 * {@link #kill} that runs once: a quick first step on the caller's thread ({@link #startKill}),
 * then the wait and the check off it ({@link #finishKill}), timed for the {@link KillReport}.
 */
public abstract class AbstractSandbox implements Sandbox {
  protected final String id;
  protected final Path workspace;
  protected final WorkerConnection worker;
  protected final Executor blocking;
  protected final Limits limits;
  protected final HostUser user;
  private final AtomicReference<CompletableFuture<KillReport>> kill = new AtomicReference<>();

  /**
   * @param blocking runs the kill's wait and check, and what else of the sandbox's may block
   */
  protected AbstractSandbox(
      String id,
      Path workspace,
      WorkerConnection worker,
      Executor blocking,
      Limits limits,
      HostUser user) {
    this.id = id;
    this.workspace = workspace;
    this.worker = worker;
    this.blocking = blocking;
    this.limits = limits;
    this.user = user;
  }

  /** The kill's first step, on the caller's thread: quick (a signal, a request written). */
  protected abstract void startKill(String reason);

  /**
   * The rest of the kill, on {@code blocking}: waits for the sandbox's processes to go, closes its
   * worker connection and looks for what is left.
   *
   * @return the processes still found (and killed) after the wait
   */
  protected abstract int finishKill(String reason);

  @Override
  public final CompletableFuture<KillReport> kill(String reason) {
    CompletableFuture<KillReport> mine = new CompletableFuture<>();
    if (!kill.compareAndSet(null, mine)) {
      return kill.get();
    }
    long started = System.nanoTime();
    startKill(reason);
    blocking.execute(
        () -> {
          try {
            int left = finishKill(reason);
            mine.complete(
                new KillReport(left, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)));
          } catch (RuntimeException e) {
            mine.completeExceptionally(e);
          }
        });
    return mine;
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public Path workspace() {
    return workspace;
  }

  @Override
  public HostUser hostUser() {
    return user;
  }

  @Override
  public WorkerConnection worker() {
    return worker;
  }

  @Override
  public Limits limits() {
    return limits;
  }
}

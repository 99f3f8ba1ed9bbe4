package dev.pysandbox.backend.bwrap;

import dev.pysandbox.backend.KillReport;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxExit;
import dev.pysandbox.worker.WorkerConnection;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One bubblewrap sandbox. Killing it sends SIGKILL to the bwrap process group (the sandbox's PID 1
 * goes with it, and the kernel then kills every process left in its PID namespace, however it
 * detached itself), waits for the launcher to reap it, and then looks in {@code /proc} for anything
 * still in that namespace, killing and counting what it finds.
 */
final class BwrapSandbox implements Sandbox {
  private static final Logger log = LoggerFactory.getLogger(BwrapSandbox.class);
  private static final long CHECK_MILLIS = 2000;

  private final String id;
  private final Path workspace;
  private final WorkerConnection worker;
  private final LauncherClient.Child child;
  private final LauncherClient launcher;
  private final Executor blocking;
  private final AtomicReference<CompletableFuture<KillReport>> kill = new AtomicReference<>();

  BwrapSandbox(
      String id,
      Path workspace,
      WorkerConnection worker,
      LauncherClient.Child child,
      LauncherClient launcher,
      Executor blocking) {
    this.id = id;
    this.workspace = workspace;
    this.worker = worker;
    this.child = child;
    this.launcher = launcher;
    this.blocking = blocking;
    child.exited.whenComplete(
        (exit, err) -> worker.close("the sandbox " + (exit == null ? "ended" : exit.describe())));
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
  public WorkerConnection worker() {
    return worker;
  }

  @Override
  public CompletableFuture<SandboxExit> exited() {
    return child.exited;
  }

  @Override
  public CompletableFuture<KillReport> kill(String reason) {
    CompletableFuture<KillReport> mine = new CompletableFuture<>();
    if (!kill.compareAndSet(null, mine)) {
      return kill.get();
    }
    log.debug("killing sandbox {}: {}", id, reason);
    long started = System.nanoTime();
    launcher.kill(child);
    blocking.execute(
        () -> {
          try {
            mine.complete(killAndCheck(started));
          } catch (RuntimeException e) {
            mine.completeExceptionally(e);
          }
        });
    return mine;
  }

  private KillReport killAndCheck(long started) {
    try {
      child.exited.get(CHECK_MILLIS, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      log.warn("sandbox {} not reaped {} ms after SIGKILL", id, CHECK_MILLIS);
    }
    Long namespace = child.pidNamespace.getNow(null);
    int left = 0;
    if (namespace != null) {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CHECK_MILLIS);
      List<Long> pids = ProcessTable.inPidNamespace(namespace);
      while (!pids.isEmpty() && System.nanoTime() < deadline) {
        pids.forEach(ProcessTable::killNow);
        sleep(5);
        pids = ProcessTable.inPidNamespace(namespace);
      }
      left = pids.size();
      if (left > 0) {
        log.error("sandbox {}: {} processes survived SIGKILL: {}", id, left, pids);
      }
    }
    worker.close("the sandbox was killed");
    return new KillReport(left, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

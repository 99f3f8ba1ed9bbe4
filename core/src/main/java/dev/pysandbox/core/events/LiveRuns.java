package dev.pysandbox.core.events;

import dev.pysandbox.api.EventSink;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.Subscription;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event logs of the runs in flight here, and of those that ended lately (kept {@link
 * #RETAIN_MILLIS}, at most {@link #RETAIN_MAX} of them and {@link #RETAIN_BYTES} in all, so that a
 * client that lost its connection resumes). Subscribing to any other run of the caller's is served
 * from the store: a finished run is replayed from its record; one still running in another process
 * (a CLI watching a server's run) is looked for every {@link #REMOTE_POLL_MILLIS} ms on the timer,
 * without a thread of its own, and replayed when it has ended.
 */
public final class LiveRuns {
  private static final Logger log = LoggerFactory.getLogger(LiveRuns.class);

  /** Output buffered per run for its subscribers. */
  public static final long BUFFER_BYTES = 1024 * 1024;

  static final long RETAIN_MILLIS = 60_000;
  static final int RETAIN_MAX = 1024;
  static final long RETAIN_BYTES = 64L * 1024 * 1024;
  static final long REMOTE_POLL_MILLIS = 500;

  /** How often ended logs are looked at for expiry. */
  static final long SWEEP_MILLIS = 5_000;

  private final Map<String, RunEventLog> logs = new ConcurrentHashMap<>();

  /** Ended logs still kept, in the order they ended; guarded by itself. */
  private final ArrayDeque<Kept> ended = new ArrayDeque<>();

  private long endedBytes;
  private final AtomicBoolean sweeping = new AtomicBoolean();
  private final ScheduledExecutorService timer;
  private final Executor blocking;
  private final LongSupplier nanoTime;
  private final Function<String, Optional<RunRecord>> store;
  private final Function<String, Path> spillFile;
  private final boolean spill;

  private record Kept(RunEventLog log, long endedAtNanos, long bytes) {}

  /**
   * @param nanoTime the core's monotonic time, for expiry
   * @param store a run by id, as stored (any tenant's: the caller checks)
   * @param spillFile where a run's events are spilled for other processes ({@link EventSpill})
   * @param spill whether this core spills the events of its runs (a server), or only reads what
   *     others spill (a command that only looks)
   */
  public LiveRuns(
      ScheduledExecutorService timer,
      Executor blocking,
      LongSupplier nanoTime,
      Function<String, Optional<RunRecord>> store,
      Function<String, Path> spillFile,
      boolean spill) {
    this.timer = timer;
    this.blocking = blocking;
    this.nanoTime = nanoTime;
    this.store = store;
    this.spillFile = spillFile;
    this.spill = spill;
  }

  /** A new run's log, from {@code started} on. */
  public RunEventLog open(String runId, String tenant, String sessionId) {
    RunEventLog l = new RunEventLog(runId, tenant, sessionId, BUFFER_BYTES);
    logs.put(runId, l);
    if (spill) {
      EventSpill.start(l, spillFile.apply(runId), blocking, timer, RETAIN_MILLIS);
    }
    return l;
  }

  /** The run never got recorded: nobody can know its id, its log goes. */
  public void drop(RunEventLog l) {
    logs.remove(l.runId, l);
  }

  /**
   * The run ended: its log gets the rest and {@code done}, and is kept a while; the oldest kept go
   * when there are too many.
   */
  public void ended(RunEventLog l, RunRecord run) {
    l.end(run);
    Kept k = new Kept(l, nanoTime.getAsLong(), l.retainedBytes());
    synchronized (ended) {
      ended.add(k);
      endedBytes += k.bytes();
      while (!ended.isEmpty() && (ended.size() > RETAIN_MAX || endedBytes > RETAIN_BYTES)) {
        forget(ended.poll());
      }
    }
    if (sweeping.compareAndSet(false, true)) {
      try {
        timer.scheduleWithFixedDelay(
            this::expire, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        // the core is closing: nothing needs keeping
      }
    }
  }

  /** Lets go of the logs kept past {@link #RETAIN_MILLIS} (the timer, every few seconds). */
  void expire() {
    long now = nanoTime.getAsLong();
    synchronized (ended) {
      while (!ended.isEmpty()
          && now - ended.peek().endedAtNanos() >= TimeUnit.MILLISECONDS.toNanos(RETAIN_MILLIS)) {
        forget(ended.poll());
      }
    }
  }

  private void forget(Kept k) {
    endedBytes -= k.bytes();
    logs.remove(k.log().runId, k.log());
  }

  /** Logs held now (in flight and kept), for tests. */
  int held() {
    return logs.size();
  }

  /** The log of a run in flight or kept, or {@code null}. */
  RunEventLog log(String runId) {
    return logs.get(runId);
  }

  /**
   * Subscribes {@code tenant} to a run's events.
   *
   * @param stored the tenant's run as stored; throws {@code not_found} for another tenant's run
   */
  public Subscription attach(
      String tenant,
      String runId,
      long afterSeq,
      EventSink sink,
      BiFunction<String, String, RunRecord> stored) {
    if (afterSeq < 0) {
      throw PysandboxException.invalid("the last event id must be 0 or more, got " + afterSeq);
    }
    RunEventLog l = logs.get(runId);
    if (l != null && l.tenant.equals(tenant)) {
      return l.subscribe(afterSeq, sink);
    }
    // Another tenant's run and an unknown one take the same path from here: the store says
    // not_found for both.
    RunRecord r = stored.apply(tenant, runId);
    if (r.status() == RunStatus.RUNNING) {
      l = logs.get(runId);
      if (l != null && l.tenant.equals(tenant)) {
        return l.subscribe(afterSeq, sink);
      }
      return new StoredRun(runId, afterSeq, sink).start(r);
    }
    return new StoredRun(runId, afterSeq, sink).replay(r);
  }

  /**
   * The events a finished run's record tells: {@code started}, its kept output, displays, result,
   * error and {@code done}, numbered from 1. A subscriber that resumes ({@code afterSeq > 0}) gets
   * {@code done} alone: its numbers came from a log that is gone.
   */
  static List<RunEvent> replay(RunRecord r, long afterSeq) {
    List<RunEvent> all = new ArrayList<>();
    long seq = 1;
    all.add(new RunEvent.Started(seq++, r.runId(), r.sessionId()));
    if (r.stdout() != null && !r.stdout().isEmpty()) {
      all.add(new RunEvent.Stdout(seq++, r.stdout()));
    }
    if (r.stderr() != null && !r.stderr().isEmpty()) {
      all.add(new RunEvent.Stderr(seq++, r.stderr()));
    }
    for (Map<String, Object> d : r.displays()) {
      all.add(new RunEvent.Display(seq++, d));
    }
    if (r.result() != null) {
      all.add(new RunEvent.Result(seq++, r.result()));
    }
    if (r.error() != null) {
      all.add(
          new RunEvent.Failed(seq++, r.error().name(), r.error().value(), r.error().traceback()));
    }
    if (afterSeq > 0) {
      return List.of(new RunEvent.Done(Math.max(seq, afterSeq + 1), r));
    }
    all.add(new RunEvent.Done(seq, r));
    return all;
  }

  /** A subscription served from the store: a finished run, or one another process runs. */
  private final class StoredRun implements Subscription {
    private final String runId;
    private final long afterSeq;
    private final EventSink sink;
    private final ArrayDeque<RunEvent> ready = new ArrayDeque<>();
    private boolean finished;
    private boolean closed;
    private ScheduledFuture<?> polling;
    private final EventSpill.Tail tail;
    private long lastSeq = 1;
    private boolean tailed;

    StoredRun(String runId, long afterSeq, EventSink sink) {
      this.runId = runId;
      this.afterSeq = afterSeq;
      this.sink = sink;
      this.tail = new EventSpill.Tail(spillFile.apply(runId));
    }

    /** What the server running it spilled since the last look. */
    private synchronized boolean follow() {
      List<RunEvent> more = tail.next();
      for (RunEvent e : more) {
        ready.add(e);
        lastSeq = Math.max(lastSeq, e.seq());
        tailed = true;
      }
      return !more.isEmpty();
    }

    StoredRun replay(RunRecord r) {
      synchronized (this) {
        ready.addAll(LiveRuns.replay(r.toBuilder().code(null).build(), afterSeq));
      }
      return this;
    }

    /** Started now; the rest when the store says the run has ended. */
    StoredRun start(RunRecord r) {
      synchronized (this) {
        if (afterSeq < 1) {
          ready.add(new RunEvent.Started(1, r.runId(), r.sessionId()));
        }
        polling =
            timer.scheduleWithFixedDelay(
                () -> blocking.execute(this::look),
                REMOTE_POLL_MILLIS,
                REMOTE_POLL_MILLIS,
                TimeUnit.MILLISECONDS);
      }
      return this;
    }

    private void look() {
      Optional<RunRecord> r;
      try {
        r = store.apply(runId);
      } catch (RuntimeException e) {
        log.debug("looking for the end of run {}: {}", runId, e.toString());
        return;
      }
      if (r.isEmpty() || r.get().status() == RunStatus.RUNNING) {
        if (follow()) {
          sink.available();
        }
        return;
      }
      synchronized (this) {
        if (closed || polling == null) {
          return;
        }
        polling.cancel(false);
        polling = null;
        follow();
        // Started was told (seq 1) unless the subscriber had it already: the rest follows it.
        List<RunEvent> rest = LiveRuns.replay(r.get().toBuilder().code(null).build(), 0);
        for (RunEvent e : rest.subList(1, rest.size())) {
          if (!tailed) {
            ready.add(e);
          } else if (!(e instanceof RunEvent.Stdout) && !(e instanceof RunEvent.Stderr)) {
            // the output came as it was printed: the rest is numbered after it
            ready.add(renumbered(e, ++lastSeq));
          }
        }
      }
      sink.available();
    }

    @Override
    public String runId() {
      return runId;
    }

    @Override
    public synchronized List<RunEvent> poll(int maxEvents) {
      List<RunEvent> out = new ArrayList<>();
      while (!closed && !ready.isEmpty() && out.size() < maxEvents) {
        RunEvent e = ready.poll();
        if (e.seq() <= afterSeq && !e.isDone()) {
          continue;
        }
        out.add(e);
        finished |= e.isDone();
      }
      return out;
    }

    @Override
    public synchronized boolean finished() {
      return finished;
    }

    @Override
    public synchronized void close() {
      closed = true;
      ready.clear();
      if (polling != null) {
        polling.cancel(false);
        polling = null;
      }
    }
  }

  private static RunEvent renumbered(RunEvent e, long seq) {
    if (e instanceof RunEvent.Display d) {
      return new RunEvent.Display(seq, d.data());
    }
    if (e instanceof RunEvent.Result r) {
      return new RunEvent.Result(seq, r.data());
    }
    if (e instanceof RunEvent.Failed f) {
      return new RunEvent.Failed(seq, f.name(), f.value(), f.traceback());
    }
    if (e instanceof RunEvent.Done d) {
      return new RunEvent.Done(seq, d.run());
    }
    return e;
  }
}

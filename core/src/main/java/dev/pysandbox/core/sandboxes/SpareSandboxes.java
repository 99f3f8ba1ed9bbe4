package dev.pysandbox.core.sandboxes;

import dev.pysandbox.api.MetricsRecorder;
import dev.pysandbox.api.MetricsRecorder.PoolTake;
import dev.pysandbox.backend.Sandbox;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.util.TimeSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One spare sandbox for each of the few specs one-shot runs used last that the warm pool does not
 * hold (a package environment's): after a one-shot run of such a spec takes a sandbox, another of
 * that spec is started in the background for the next, so that repeated one-shot runs in one
 * environment do not each wait for a start. A spare holds what its spec needs held while it lives
 * (the environment's use) and is never reused: it is taken once, or killed after {@link
 * #IDLE_MILLIS} unused, or when a spec used more recently pushes it out, or at close.
 */
public final class SpareSandboxes implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SpareSandboxes.class);

  /** How many specs keep a spare. */
  static final int MAX_SPECS = 2;

  /** A spare not taken within this long is killed. */
  static final long IDLE_MILLIS = 120_000;

  private final Function<SandboxSpec, Sandbox> start;
  private final MetricsRecorder metrics;
  private final Executor blocking;
  private final TimeSource time;

  /** By spec, least recently used first. */
  private final LinkedHashMap<SandboxSpec, Spare> spares = new LinkedHashMap<>(8, 0.75f, true);

  private final Map<SandboxSpec, Boolean> starting = new LinkedHashMap<>();
  private boolean closed;

  private record Spare(Sandbox sandbox, long since, AutoCloseable held) {}

  /**
   * A sandbox and what it holds (released when it has exited, or earlier by whoever took it: a
   * one-shot run's is released as soon as the run has ended; releasing twice is harmless).
   */
  public record Started(Sandbox sandbox, AutoCloseable held) {}

  /**
   * @param start starts a sandbox of a spec now (blocking), or throws
   * @param blocking where spares are started and killed
   * @param metrics told of every take: a spare ready, or one started for it
   */
  public SpareSandboxes(
      Function<SandboxSpec, Sandbox> start,
      Executor blocking,
      ScheduledExecutorService timer,
      TimeSource time,
      MetricsRecorder metrics) {
    this.start = start;
    this.metrics = metrics;
    this.blocking = blocking;
    this.time = time;
    timer.scheduleWithFixedDelay(this::expire, 30, 30, TimeUnit.SECONDS);
  }

  /**
   * A fresh sandbox of {@code spec}: the spare when one is ready, else one started now; either way
   * a spare for the next call is started in the background. {@code hold} is taken for each sandbox
   * (the one returned and the spare) and released when that sandbox has exited.
   *
   * @throws dev.pysandbox.api.PysandboxException when no sandbox can be started now
   */
  public Started take(SandboxSpec spec, Supplier<AutoCloseable> hold) {
    long began = time.nanoTime();
    Spare spare;
    synchronized (this) {
      spare = spares.remove(spec);
    }
    Started s = null;
    if (spare != null && spare.sandbox().worker().isOpen()) {
      s = new Started(spare.sandbox(), spare.held());
    } else if (spare != null) {
      discard(spare.sandbox(), "it died while spare");
    }
    PoolTake how = PoolTake.READY;
    if (s == null) {
      s = startHeld(spec, hold);
      how = PoolTake.NOT_POOLED;
    }
    metrics.sandboxTaken(how, time.nanoTime() - began);
    refill(spec, hold);
    return s;
  }

  private Started startHeld(SandboxSpec spec, Supplier<AutoCloseable> hold) {
    AutoCloseable held = hold.get();
    Sandbox s;
    try {
      s = start.apply(spec);
    } catch (RuntimeException e) {
      release(held);
      throw e;
    }
    s.exited().whenComplete((x, err) -> release(held));
    return new Started(s, held);
  }

  private void refill(SandboxSpec spec, Supplier<AutoCloseable> hold) {
    synchronized (this) {
      if (closed || starting.containsKey(spec) || spares.containsKey(spec)) {
        return;
      }
      starting.put(spec, Boolean.TRUE);
    }
    try {
      blocking.execute(
          () -> {
            Started s = null;
            try {
              s = startHeld(spec, hold);
            } catch (RuntimeException e) {
              log.debug("no spare sandbox: {}", e.getMessage());
            }
            List<Sandbox> out = new ArrayList<>();
            synchronized (this) {
              starting.remove(spec);
              if (s != null) {
                if (closed) {
                  out.add(s.sandbox());
                } else {
                  spares.put(spec, new Spare(s.sandbox(), time.nanoTime(), s.held()));
                  while (spares.size() > MAX_SPECS) {
                    var eldest = spares.entrySet().iterator().next();
                    spares.remove(eldest.getKey());
                    out.add(eldest.getValue().sandbox());
                  }
                }
              }
            }
            out.forEach(x -> discard(x, "no longer spare"));
          });
    } catch (RejectedExecutionException e) {
      synchronized (this) {
        starting.remove(spec);
      }
    }
  }

  /** Kills spares not taken for {@link #IDLE_MILLIS}. */
  void expire() {
    long now = time.nanoTime();
    List<Sandbox> out = new ArrayList<>();
    synchronized (this) {
      var it = spares.values().iterator();
      while (it.hasNext()) {
        Spare s = it.next();
        if (now - s.since() > TimeUnit.MILLISECONDS.toNanos(IDLE_MILLIS)) {
          it.remove();
          out.add(s.sandbox());
        }
      }
    }
    out.forEach(s -> discard(s, "spare unused for " + IDLE_MILLIS / 1000 + " s"));
  }

  /**
   * Kills the spares whose spec matches, and waits (up to 5 s each) until they have exited and let
   * go of what they held: before environments are cleaned, a spare is no use.
   */
  public void drop(java.util.function.Predicate<SandboxSpec> which) {
    long deadline = time.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (time.nanoTime() - deadline < 0) {
      synchronized (this) {
        if (starting.keySet().stream().noneMatch(which)) {
          break;
        }
      }
      dev.pysandbox.util.Pause.millis(20); // a spare on its way: drop it once it is there
    }
    List<Spare> out = new ArrayList<>();
    synchronized (this) {
      var it = spares.entrySet().iterator();
      while (it.hasNext()) {
        var e = it.next();
        if (which.test(e.getKey())) {
          it.remove();
          out.add(e.getValue());
        }
      }
    }
    for (Spare spare : out) {
      Sandbox s = spare.sandbox();
      s.kill("spare sandbox: its environment is being cleaned");
      try {
        s.exited().get(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        log.debug("spare sandbox {} did not exit in time", s.id());
      }
      release(spare.held()); // at once, not when the exit's callbacks get to it
      discard(s, "its environment is being cleaned");
    }
  }

  /** How many spares (ready or starting) have a spec matching. */
  public synchronized int count(java.util.function.Predicate<SandboxSpec> which) {
    return (int)
        (spares.keySet().stream().filter(which).count()
            + starting.keySet().stream().filter(which).count());
  }

  private void discard(Sandbox s, String why) {
    WorkspaceDisposal.killAndDiscard(s, "spare sandbox: " + why, blocking);
  }

  private static void release(AutoCloseable held) {
    dev.pysandbox.util.Closeables.quietly(held, log);
  }

  @Override
  public void close() {
    List<Sandbox> out = new ArrayList<>();
    synchronized (this) {
      closed = true;
      spares.values().forEach(s -> out.add(s.sandbox()));
      spares.clear();
    }
    for (Sandbox s : out) {
      s.kill("the server is stopping");
    }
  }
}

package dev.pysandbox.core.audit;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventCounts;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.store.RunStore;
import dev.pysandbox.util.TimeSource;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.BlockingDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records security events (approvals, limits that stopped runs, denied imports and network
 * attempts, sandboxes that died) in the store, off the path of whoever records one: {@link #record}
 * counts the event, logs it and queues it (at most {@value #QUEUE_CAPACITY}; past that it is
 * dropped, counted and warned about at most once a minute), and a drain on the core's blocking pool
 * writes the queue out. The store can wait seconds for another process's write lock, and events are
 * recorded on threads that must not wait (the hub's, a sandbox's exit hook), hence the queue. While
 * the store cannot take an event it stays at the head of the queue and is tried again every second.
 * Never throws to its caller.
 */
public final class SecurityEventLog {
  private static final Logger log = LoggerFactory.getLogger(SecurityEventLog.class);

  static final int QUEUE_CAPACITY = 10_000;
  private static final long RETRY_MILLIS = 1000;
  private static final long FLUSH_WAIT_MILLIS = 2000;
  private static final long CLOSE_WAIT_MILLIS = 1000;
  private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
  private static final SecurityEvent.Kind[] KINDS = SecurityEvent.Kind.values();

  private final Supplier<RunStore> store;
  private final TimeSource time;
  private final Executor pool;
  private final ScheduledExecutorService timer;
  private final boolean enabled;
  private final BlockingDeque<SecurityEvent> queue;
  private final AtomicLongArray counts = new AtomicLongArray(KINDS.length);
  private final AtomicLong notStored = new AtomicLong();
  // True while a drain is queued on the pool, running, or waiting to try the store again.
  private final AtomicBoolean draining = new AtomicBoolean();
  // One writer at a time (a drain, a flush before a listing, the last one at close), so that the
  // head of the queue is written once and in order.
  private final ReentrantLock writing = new ReentrantLock();
  private final AtomicLong lastWarning;
  private volatile boolean closed;

  /**
   * @param store the store, waiting while it opens ({@code store_unavailable} when it cannot)
   * @param pool where the queue is written out (the core's blocking pool)
   * @param timer where a write the store refused is tried again a second later
   * @param enabled false for a core that only looks: events are counted and logged, not stored
   */
  public SecurityEventLog(
      Supplier<RunStore> store,
      TimeSource time,
      Executor pool,
      ScheduledExecutorService timer,
      boolean enabled) {
    this(store, time, pool, timer, enabled, QUEUE_CAPACITY);
  }

  SecurityEventLog(
      Supplier<RunStore> store,
      TimeSource time,
      Executor pool,
      ScheduledExecutorService timer,
      boolean enabled,
      int capacity) {
    this.store = store;
    this.time = time;
    this.pool = pool;
    this.timer = timer;
    this.enabled = enabled;
    this.queue = new LinkedBlockingDeque<>(capacity);
    this.lastWarning = new AtomicLong(time.nanoTime() - WARN_EVERY_NANOS);
  }

  /**
   * Records one event: counted at once, stored shortly after. Never blocks on the store, never
   * throws.
   *
   * @param tenant whose event it is ({@code local} when null)
   * @param sessionId the session it concerns, or null
   * @param runId the run it concerns, or null
   * @param detail a small JSON object saying what exactly (null values are left out)
   */
  public void record(
      String tenant,
      SecurityEvent.Kind kind,
      String sessionId,
      String runId,
      Map<String, Object> detail) {
    try {
      counts.incrementAndGet(kind.ordinal());
      SecurityEvent e =
          new SecurityEvent(
              Ids.newEventId(),
              kind.wireName(),
              tenant == null ? Tenants.LOCAL : tenant,
              sessionId,
              runId,
              time.instant().truncatedTo(ChronoUnit.MILLIS).toString(),
              detail);
      log.info(
          "security event {} {} (tenant {}, session {}, run {}): {}",
          e.kind(),
          e.eventId(),
          e.tenant(),
          sessionId,
          runId,
          e.detail());
      if (!enabled) {
        return;
      }
      if (closed || !queue.offerLast(e)) {
        lost(1, closed ? "the server is stopping" : "the queue is full");
        return;
      }
      scheduleDrain();
    } catch (RuntimeException e) {
      log.warn("could not record the security event {}: {}", kind, e.toString());
    }
  }

  /** Events recorded since start, by kind, and how many of them never reached the store. */
  public SecurityEventCounts counts() {
    Map<String, Long> byKind = new LinkedHashMap<>();
    for (SecurityEvent.Kind k : KINDS) {
      byKind.put(k.wireName(), counts.get(k.ordinal()));
    }
    return new SecurityEventCounts(byKind, notStored.get());
  }

  /** Events queued and not yet written. */
  int queued() {
    return queue.size();
  }

  /**
   * Writes what is queued now, on the caller's thread (waiting at most two seconds for a write
   * under way), so that a listing that follows shows every event this server has recorded. An event
   * the store cannot take stays queued for the drain.
   */
  public void flush() {
    if (queue.isEmpty()) {
      return;
    }
    writeQueuedWaiting(FLUSH_WAIT_MILLIS);
  }

  /**
   * Writes what is queued (waiting at most a second for a write under way); from now on events are
   * counted and logged but not stored. Call before the store closes. Idempotent.
   */
  public void close() {
    closed = true;
    writeQueuedWaiting(CLOSE_WAIT_MILLIS);
    int left = queue.size();
    if (left > 0) {
      queue.clear();
      lost(left, "the store could not take them before the server stopped");
    }
  }

  /** Writes what is queued on the caller's thread, unless a write under way takes longer. */
  private void writeQueuedWaiting(long waitMillis) {
    try {
      if (writing.tryLock(waitMillis, TimeUnit.MILLISECONDS)) {
        try {
          writeQueued();
        } finally {
          writing.unlock();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void scheduleDrain() {
    if (draining.compareAndSet(false, true)) {
      try {
        pool.execute(this::drain);
      } catch (RejectedExecutionException e) {
        draining.set(false);
      }
    }
  }

  private void drain() {
    boolean done;
    writing.lock();
    try {
      done = writeQueued();
    } finally {
      writing.unlock();
    }
    if (!done && !closed) {
      try {
        // Still draining: records only queue until the store is tried again.
        timer.schedule(() -> pool.execute(this::drain), RETRY_MILLIS, TimeUnit.MILLISECONDS);
        return;
      } catch (RejectedExecutionException e) {
        // the core is stopping: close() writes what it can
      }
    }
    draining.set(false);
    if (!queue.isEmpty() && !closed) {
      scheduleDrain(); // queued after the last look and before draining was cleared
    }
  }

  /**
   * Writes the queue out in order; the caller holds {@link #writing}.
   *
   * @return false when the store could not take the event at the head (it stays queued)
   */
  private boolean writeQueued() {
    SecurityEvent e;
    while ((e = queue.peekFirst()) != null) {
      try {
        store.get().recordSecurityEvent(e);
      } catch (PysandboxException x) {
        if (x.code() == ErrorCode.STORE_UNAVAILABLE || x.code() == ErrorCode.DISK_FULL) {
          warn(
              "security events: the store cannot take them ({}); {} queued, tried again every"
                  + " second",
              x.getMessage(),
              queue.size());
          return false;
        }
        lostOne(e, x);
      } catch (RuntimeException x) {
        lostOne(e, x);
      }
      queue.pollFirst();
    }
    return true;
  }

  private void lostOne(SecurityEvent e, RuntimeException x) {
    notStored.incrementAndGet();
    log.warn("security event {} {} could not be stored: {}", e.kind(), e.eventId(), x.toString());
  }

  private void lost(int n, String why) {
    long total = notStored.addAndGet(n);
    warn("security events: {} not stored ({} since start): {}", n, total, why);
  }

  /**
   * A warning at most once a minute, so that a full queue or a full disk does not flood the log.
   */
  private void warn(String format, Object... args) {
    long now = time.nanoTime();
    long last = lastWarning.get();
    if (now - last >= WARN_EVERY_NANOS && lastWarning.compareAndSet(last, now)) {
      log.warn(format, args);
    }
  }
}

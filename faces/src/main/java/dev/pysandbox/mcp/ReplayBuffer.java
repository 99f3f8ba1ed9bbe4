package dev.pysandbox.mcp;

import dev.pysandbox.util.TimeSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The SSE events one MCP session sent over Streamable HTTP, kept so that a client whose stream
 * dropped can resume it with {@code Last-Event-ID}. Bounded three ways, for the whole session: at
 * most {@code maxEvents} events and {@code maxBytes} bytes (the oldest go first), none older than
 * {@code maxAge}; and every session together within one shared {@link Budget}. An event that does
 * not fit is not kept. A client that never comes back therefore costs at most the bounds, and for
 * no longer than {@code maxAge} after its last event.
 *
 * <p>What was dropped is remembered per stream as the highest sequence number lost, so that a
 * resume from before it is refused ({@link #after} answers null) instead of silently skipping
 * events.
 */
final class ReplayBuffer {
  /** Bytes kept by every session's buffer together. */
  static final class Budget {
    private final long maxBytes;
    private final AtomicLong used = new AtomicLong();

    Budget(long maxBytes) {
      this.maxBytes = maxBytes;
    }

    boolean reserve(long bytes) {
      long now;
      do {
        now = used.get();
        if (now + bytes > maxBytes) {
          return false;
        }
      } while (!used.compareAndSet(now, now + bytes));
      return true;
    }

    void release(long bytes) {
      used.addAndGet(-bytes);
    }

    long used() {
      return used.get();
    }
  }

  private record Event(int stream, long seq, byte[] frame, long atNanos) {}

  /** The frame of a stream's end ({@link #addEnd}): nothing to replay. */
  private static final byte[] END = new byte[0];

  private final int maxEvents;
  private final long maxBytes;
  private final long maxAgeNanos;
  private final Budget budget;
  private final TimeSource time;
  private final ArrayDeque<Event> events = new ArrayDeque<>();

  /** By stream: the highest sequence number no longer kept. */
  private final Map<Integer, Long> lostUpTo = new HashMap<>();

  private long bytes;

  ReplayBuffer(int maxEvents, long maxBytes, long maxAgeMillis, Budget budget, TimeSource time) {
    this.maxEvents = maxEvents;
    this.maxBytes = maxBytes;
    this.maxAgeNanos = maxAgeMillis * 1_000_000L;
    this.budget = budget;
    this.time = time;
  }

  /**
   * Keeps the end of {@code stream} as an event without a frame, under the same bounds as its
   * events: while it is kept ({@link #holds}) the stream is remembered, so that a resume from any
   * of its ids is answered "ended" also when none of its events was kept (a call cancelled before
   * it sent anything but the priming event); {@link #after} never replays it.
   *
   * @param seq one past the stream's last event
   */
  void addEnd(int stream, long seq) {
    add(stream, seq, END);
  }

  /** Keeps event {@code seq} of {@code stream} (its whole SSE frame), dropping what it must. */
  synchronized void add(int stream, long seq, byte[] frame) {
    expire();
    if (frame.length > maxBytes || !budget.reserve(frame.length)) {
      lost(stream, seq);
      return;
    }
    events.addLast(new Event(stream, seq, frame, time.nanoTime()));
    bytes += frame.length;
    while (events.size() > maxEvents || bytes > maxBytes) {
      drop(events.removeFirst());
    }
  }

  /**
   * The frames of {@code stream} that came after {@code seq}, oldest first; null when one of them
   * is no longer kept.
   */
  synchronized List<byte[]> after(int stream, long seq) {
    expire();
    if (lostUpTo.getOrDefault(stream, -1L) > seq) {
      return null;
    }
    List<byte[]> frames = new ArrayList<>();
    for (Event e : events) {
      if (e.stream() == stream && e.seq() > seq && e.frame() != END) {
        frames.add(e.frame());
      }
    }
    return frames;
  }

  /** True while an event of {@code stream} is kept. */
  synchronized boolean holds(int stream) {
    for (Event e : events) {
      if (e.stream() == stream) {
        return true;
      }
    }
    return false;
  }

  /** Drops everything of {@code stream}, and what was remembered of it. */
  synchronized void forget(int stream) {
    Iterator<Event> it = events.iterator();
    while (it.hasNext()) {
      Event e = it.next();
      if (e.stream() == stream) {
        it.remove();
        release(e);
      }
    }
    lostUpTo.remove(stream);
  }

  /** Drops the events older than the age bound. */
  synchronized void expire() {
    long now = time.nanoTime();
    while (!events.isEmpty() && now - events.peekFirst().atNanos() > maxAgeNanos) {
      drop(events.removeFirst());
    }
  }

  /** Drops everything: the session ended. */
  synchronized void clear() {
    events.forEach(this::release);
    events.clear();
    lostUpTo.clear();
  }

  synchronized int size() {
    return events.size();
  }

  synchronized long bytes() {
    return bytes;
  }

  private void drop(Event e) {
    release(e);
    lost(e.stream(), e.seq());
  }

  private void release(Event e) {
    bytes -= e.frame().length;
    budget.release(e.frame().length);
  }

  private void lost(int stream, long seq) {
    lostUpTo.merge(stream, seq, Math::max);
  }
}

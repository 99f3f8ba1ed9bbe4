package dev.pysandbox.core.events;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.EventSink;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.Subscription;
import dev.pysandbox.worker.RequestListener;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run's events, as they happen, in a bounded buffer: output is appended by the hub's thread
 * (this is the run's {@link RequestListener}), and subscribers take events by polling their own
 * cursor, so that a subscriber costs no thread and a slow one never slows the run. Past {@link
 * #capacityBytes} of buffered output the oldest events are dropped; a cursor that had not taken
 * them gets {@link RunEvent.Lagged} and goes on from the oldest event kept. {@code started} and the
 * newest event are never dropped, so {@code done} always reaches a subscriber.
 *
 * <p>The record the run keeps is made elsewhere (head and tail, {@code OutputCapture}): what is
 * dropped here is only what nobody was reading fast enough.
 */
public final class RunEventLog implements RequestListener {
  private static final Logger log = LoggerFactory.getLogger(RunEventLog.class);

  /** What each event costs besides its content, so that many tiny events are bounded too. */
  static final long EVENT_OVERHEAD_BYTES = 64;

  final String runId;
  final String tenant;
  private final long capacityBytes;
  private final RunEvent.Started started;
  private final Utf8Chunks stdout = new Utf8Chunks();
  private final Utf8Chunks stderr = new Utf8Chunks();

  // Guarded by this.
  private final List<Entry> entries = new ArrayList<>();
  private int head;
  private long nextSeq = 2;
  private long bufferedBytes;
  private long contentEnd;
  private int liveDisplays;
  private boolean ended;
  private RunRecord record;
  private final List<Cursor> cursors = new ArrayList<>();

  /**
   * @param startOffset the content bytes an event had before it
   * @param contentBytes its own (text as UTF-8 bytes read, a display's frame size)
   */
  private record Entry(RunEvent event, long startOffset, long contentBytes) {}

  public RunEventLog(String runId, String tenant, String sessionId, long capacityBytes) {
    this.runId = runId;
    this.tenant = tenant;
    this.capacityBytes = capacityBytes;
    this.started = new RunEvent.Started(1, runId, sessionId);
  }

  // -- produced (the hub's thread for output, the run's for its end) ------------------------------

  @Override
  public void output(boolean toStderr, ByteBuffer bytes) {
    int n = bytes.remaining();
    String text = (toStderr ? stderr : stdout).decode(bytes);
    if (!text.isEmpty()) {
      append(seq -> toStderr ? new RunEvent.Stderr(seq, text) : new RunEvent.Stdout(seq, text), n);
    }
  }

  @Override
  public void display(ObjectNode bundle, long frameBytes) {
    Map<String, Object> data = Json.toMap(bundle);
    synchronized (this) {
      liveDisplays++;
    }
    append(seq -> new RunEvent.Display(seq, data), frameBytes);
  }

  /**
   * The run ended with {@code run} (without its code): what the record has and no event told yet
   * (displays made at the end — matplotlib figures —, the result, the error) is appended, then
   * {@code done}. Later output is ignored. Idempotent.
   */
  void end(RunRecord run) {
    synchronized (this) {
      if (ended) {
        return;
      }
    }
    String outRest = stdout.flush();
    if (!outRest.isEmpty()) {
      append(seq -> new RunEvent.Stdout(seq, outRest), outRest.length());
    }
    String errRest = stderr.flush();
    if (!errRest.isEmpty()) {
      append(seq -> new RunEvent.Stderr(seq, errRest), errRest.length());
    }
    List<Map<String, Object>> displays = run.displays();
    int told;
    synchronized (this) {
      told = liveDisplays;
    }
    for (int i = told; i < displays.size(); i++) {
      Map<String, Object> d = displays.get(i);
      append(seq -> new RunEvent.Display(seq, d), sizeOf(d));
    }
    if (run.result() != null) {
      append(seq -> new RunEvent.Result(seq, run.result()), sizeOf(run.result()));
    }
    if (run.error() != null) {
      var e = run.error();
      append(seq -> new RunEvent.Failed(seq, e.name(), e.value(), e.traceback()), 0);
    }
    List<Cursor> wake;
    synchronized (this) {
      record = run;
      appendLocked(new RunEvent.Done(nextSeq++, run), 0);
      ended = true;
      wake = armed();
    }
    wakeAll(wake);
  }

  synchronized boolean ended() {
    return ended;
  }

  /** What this log holds: buffered output and, once ended, the record's kept output. */
  synchronized long retainedBytes() {
    long r = bufferedBytes;
    if (record != null) {
      r += length(record.stdout()) + length(record.stderr());
    }
    return r;
  }

  /** Buffered output in bytes (at most the capacity, plus the newest event). */
  synchronized long bufferedBytes() {
    return bufferedBytes;
  }

  private static long length(String s) {
    return s == null ? 0 : s.length();
  }

  private static long sizeOf(Object value) {
    try {
      return Json.mapper().writeValueAsBytes(value).length;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      return 0;
    }
  }

  private interface Numbered {
    RunEvent at(long seq);
  }

  private void append(Numbered event, long contentBytes) {
    List<Cursor> wake;
    synchronized (this) {
      if (ended) {
        return;
      }
      appendLocked(event.at(nextSeq++), contentBytes);
      wake = armed();
    }
    wakeAll(wake);
  }

  private void appendLocked(RunEvent event, long contentBytes) {
    entries.add(new Entry(event, contentEnd, contentBytes));
    contentEnd += contentBytes;
    bufferedBytes += contentBytes + EVENT_OVERHEAD_BYTES;
    // The oldest go first, never the newest: done always stays.
    while (bufferedBytes > capacityBytes && entries.size() - head > 1) {
      Entry dropped = entries.get(head);
      entries.set(head, null);
      head++;
      bufferedBytes -= dropped.contentBytes() + EVENT_OVERHEAD_BYTES;
    }
    if (head > 1024 && head > entries.size() / 2) {
      entries.subList(0, head).clear();
      head = 0;
    }
  }

  private List<Cursor> armed() {
    List<Cursor> wake = null;
    for (Cursor c : cursors) {
      if (c.armed) {
        c.armed = false;
        if (wake == null) {
          wake = new ArrayList<>(2);
        }
        wake.add(c);
      }
    }
    return wake;
  }

  private void wakeAll(List<Cursor> wake) {
    if (wake == null) {
      return;
    }
    for (Cursor c : wake) {
      c.wake();
    }
  }

  // -- consumed ----------------------------------------------------------------------------------

  /**
   * A subscriber from after event {@code afterSeq}. One that asks for events already dropped gets
   * {@link RunEvent.Lagged} first, counting every byte dropped so far (its own position is not
   * known).
   */
  Subscription subscribe(long afterSeq, EventSink sink) {
    Cursor c;
    synchronized (this) {
      // An event not made yet (a client's made-up id) is taken as the latest.
      c = new Cursor(Math.min(afterSeq, nextSeq - 1), sink);
      if (ended && c.seq >= nextSeq - 1) {
        c.finished = true; // it has done already: nothing more will come
      } else {
        cursors.add(c);
      }
    }
    return c;
  }

  synchronized int subscribers() {
    return cursors.size();
  }

  /** One subscriber's place. */
  private final class Cursor implements Subscription {
    private final EventSink sink;
    // Guarded by the log.
    private long seq;
    private long offset;
    private boolean armed;
    private boolean finished;
    private boolean closed;

    Cursor(long afterSeq, EventSink sink) {
      this.sink = sink;
      this.seq = afterSeq;
      this.offset = afterSeq <= 1 ? 0 : -1;
    }

    @Override
    public String runId() {
      return runId;
    }

    @Override
    public List<RunEvent> poll(int maxEvents) {
      synchronized (RunEventLog.this) {
        if (closed || finished) {
          return List.of();
        }
        List<RunEvent> out = new ArrayList<>();
        if (seq < 1) {
          out.add(started);
          seq = 1;
        }
        int kept = entries.size() - head;
        long firstSeq = kept == 0 ? nextSeq : entries.get(head).event().seq();
        if (seq < firstSeq - 1 && out.size() < maxEvents) {
          long from = kept == 0 ? contentEnd : entries.get(head).startOffset();
          out.add(new RunEvent.Lagged(firstSeq - 1, from - Math.max(0, offset)));
          seq = firstSeq - 1;
          offset = from;
        }
        for (int i = head + (int) (seq + 1 - firstSeq);
            i < entries.size() && out.size() < maxEvents;
            i++) {
          Entry e = entries.get(i);
          out.add(e.event());
          seq = e.event().seq();
          offset = e.startOffset() + e.contentBytes();
          if (e.event().isDone()) {
            finished = true;
            cursors.remove(this);
          }
        }
        if (out.isEmpty()) {
          armed = true;
        }
        return out;
      }
    }

    @Override
    public boolean finished() {
      synchronized (RunEventLog.this) {
        return finished;
      }
    }

    @Override
    public void close() {
      synchronized (RunEventLog.this) {
        closed = true;
        armed = false;
        cursors.remove(this);
      }
    }

    void wake() {
      try {
        sink.available();
      } catch (RuntimeException e) {
        log.warn("an event subscriber of run {} failed: {}", runId, e.toString());
      }
    }
  }

  /**
   * UTF-8 decoding of a stream read in arbitrary pieces: a character split between two reads is
   * kept until its end comes (hub thread only, but {@link #flush} may come from the run's).
   */
  static final class Utf8Chunks {
    private final byte[] carry = new byte[4];
    private int carried;

    synchronized String decode(ByteBuffer in) {
      int n = carried + in.remaining();
      byte[] b = new byte[n];
      System.arraycopy(carry, 0, b, 0, carried);
      in.get(b, carried, in.remaining());
      int cut = completeLength(b, n);
      carried = n - cut;
      System.arraycopy(b, cut, carry, 0, carried);
      return new String(b, 0, cut, StandardCharsets.UTF_8);
    }

    /** What is left of a character that never ended, replaced. */
    synchronized String flush() {
      String rest = new String(carry, 0, carried, StandardCharsets.UTF_8);
      carried = 0;
      return rest;
    }

    /** The length of {@code b[0..n)} up to its last whole character. */
    static int completeLength(byte[] b, int n) {
      for (int i = n - 1; i >= Math.max(0, n - 3); i--) {
        int c = b[i] & 0xff;
        if (c < 0x80) {
          return n;
        }
        if (c >= 0xC0) {
          int need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
          return n - i < need ? i : n;
        }
      }
      return n;
    }
  }
}

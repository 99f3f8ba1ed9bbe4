package dev.pysandbox.worker;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Splits one runner's control stream into lines and decides what each line is from its first bytes
 * alone, before keeping any more of it. The runner starts every frame with a fixed prefix, {@code
 * {"id":"<request id>","type":"<type>"}, so a line that is not a frame of the request in flight (a
 * stale id, garbage the code wrote to the socket) is skipped as it streams by and never buffered,
 * and a wanted line is kept only up to the size its kind may have. Used on the hub thread only.
 */
final class FrameReader {
  /** Enough for {@code {"id":"r<16 hex digits>","type":"display"}. */
  static final int PREFIX_BYTES = 48;

  /** Frames up to this size are handed over in one array (parsed on the spot). */
  static final int INLINE_BYTES = 64 * 1024;

  enum Kind {
    READY,
    DISPLAY,
    DONE,
    /** {@code llm_query}'s question ({@link Subcalls}). */
    SUBCALL,
    /** Not a frame the connection wants: skipped. */
    OTHER
  }

  /** The connection's side. Methods returning true stop {@link #feed} where it is. */
  interface Sink {
    /** What a line is, from its first {@code length} bytes (the whole line when shorter). */
    Kind classify(byte[] prefix, int length);

    /** Most bytes a line of this kind may have (0 for {@link Kind#OTHER}). */
    long limit(Kind kind);

    /** A whole frame of at most {@link #INLINE_BYTES}, in {@code bytes[0, length)}. */
    boolean frame(Kind kind, byte[] bytes, int length);

    /** A whole frame over {@link #INLINE_BYTES}, in order. */
    boolean largeFrame(Kind kind, List<byte[]> chunks, long size);

    /** A wanted line passed its limit; the rest of it is skipped. */
    boolean tooLong(Kind kind, long limit);

    /** Bytes of an unwanted line as they stream by; {@code end} on its last piece. */
    boolean ignored(int bytes, boolean end);
  }

  private enum State {
    PREFIX,
    KEEP,
    SKIP_SILENTLY,
    SKIP
  }

  private static final byte[] READY_PREFIX = ascii("{\"id\":null,\"type\":\"ready\"");
  private static final byte[] DISPLAY_TYPE = ascii("display\"");
  private static final byte[] DONE_TYPE = ascii("done\"");
  private static final byte[] SUBCALL_TYPE = ascii("subcall\"");

  private final Sink sink;
  private State state = State.PREFIX;
  private Kind kind;
  private long limit;
  private byte[] buf = new byte[256];
  private int length;
  private List<byte[]> spilled;
  private long spilledBytes;

  FrameReader(Sink sink) {
    this.sink = sink;
  }

  /**
   * Consumes {@code data} up to its end, or up to where the sink asked to stop (the position is
   * left just after the last byte consumed).
   *
   * @return true when the sink asked to stop
   */
  boolean feed(ByteBuffer data) {
    while (data.hasRemaining()) {
      int start = data.position();
      int end = indexOfNewline(data, start);
      boolean lineEnds = end >= 0;
      int stop = lineEnds ? end : data.limit();
      if (state == State.PREFIX) {
        int n = Math.min(stop - start, PREFIX_BYTES - length);
        append(data, n);
        start += n;
        if (length < PREFIX_BYTES && !lineEnds) {
          return false; // the prefix is not all here yet
        }
        if (length == 0 && lineEnds) {
          data.position(end + 1); // the empty line every frame starts with
          continue;
        }
        kind = sink.classify(buf, length);
        if (kind == Kind.OTHER) {
          state = State.SKIP;
          if (sink.ignored(length, false)) {
            consumed(data, start, stop, lineEnds);
            return true;
          }
        } else {
          state = State.KEEP;
          limit = sink.limit(kind);
          if (length > limit) {
            state = State.SKIP_SILENTLY;
            if (sink.tooLong(kind, limit)) {
              consumed(data, start, stop, lineEnds);
              return true;
            }
          }
        }
      }
      int n = stop - start;
      switch (state) {
        case KEEP -> {
          if (length + spilledBytes + n > limit) {
            state = State.SKIP_SILENTLY;
            if (sink.tooLong(kind, limit)) {
              consumed(data, start, stop, lineEnds);
              return true;
            }
          } else {
            keep(data, n);
          }
        }
        case SKIP -> {
          if (n > 0 || lineEnds) {
            if (sink.ignored(n, lineEnds)) {
              consumed(data, start, stop, lineEnds);
              return true;
            }
          }
        }
        default -> {}
      }
      consumed(data, start, stop, lineEnds);
      if (lineEnds && endOfLine()) {
        return true;
      }
    }
    return false;
  }

  /** The prefix the frames of request {@code id} start with, up to their type. */
  static byte[] requestPrefix(String id) {
    return ascii("{\"id\":\"" + id + "\",\"type\":\"");
  }

  /**
   * What a line is, from its first bytes.
   *
   * @param readyWanted true while the runner's ready frame has not come
   * @param requestPrefix {@link #requestPrefix} of the request in flight, or {@code null}
   */
  static Kind kindOf(byte[] line, int length, boolean readyWanted, byte[] requestPrefix) {
    if (readyWanted && startsWith(line, length, READY_PREFIX, 0)) {
      return Kind.READY;
    }
    if (requestPrefix != null && startsWith(line, length, requestPrefix, 0)) {
      if (startsWith(line, length, DONE_TYPE, requestPrefix.length)) {
        return Kind.DONE;
      }
      if (startsWith(line, length, DISPLAY_TYPE, requestPrefix.length)) {
        return Kind.DISPLAY;
      }
      if (startsWith(line, length, SUBCALL_TYPE, requestPrefix.length)) {
        return Kind.SUBCALL;
      }
    }
    return Kind.OTHER;
  }

  private static boolean startsWith(byte[] bytes, int length, byte[] prefix, int at) {
    if (length < at + prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (bytes[at + i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /** A line ended: hands a kept frame over and starts afresh. */
  private boolean endOfLine() {
    State was = state;
    Kind k = kind;
    state = State.PREFIX;
    kind = null;
    if (was != State.KEEP) {
      reset();
      return false;
    }
    if (spilled == null) {
      boolean stop = sink.frame(k, buf, length);
      reset();
      return stop;
    }
    List<byte[]> chunks = new ArrayList<>(spilled.size() + 1);
    chunks.add(Arrays.copyOf(buf, length));
    chunks.addAll(spilled);
    long size = length + spilledBytes;
    reset();
    return sink.largeFrame(k, chunks, size);
  }

  private void reset() {
    length = 0;
    spilled = null;
    spilledBytes = 0;
    if (buf.length > 4096) {
      buf = new byte[256]; // one big frame does not pin a big buffer for the sandbox's life
    }
  }

  private static int indexOfNewline(ByteBuffer data, int from) {
    for (int i = from, limit = data.limit(); i < limit; i++) {
      if (data.get(i) == '\n') {
        return i;
      }
    }
    return -1;
  }

  private static void consumed(ByteBuffer data, int start, int stop, boolean lineEnds) {
    data.position(lineEnds ? stop + 1 : stop);
  }

  /** Copies {@code n} bytes at the data's position into the line buffer (within INLINE_BYTES). */
  private void append(ByteBuffer data, int n) {
    if (length + n > buf.length) {
      buf = Arrays.copyOf(buf, Math.min(INLINE_BYTES, Math.max(buf.length * 2, length + n)));
    }
    data.get(data.position(), buf, length, n);
    data.position(data.position() + n);
    length += n;
  }

  /** Keeps {@code n} bytes of a wanted line: in the line buffer while it fits, then in chunks. */
  private void keep(ByteBuffer data, int n) {
    int inline = spilled == null ? Math.min(n, INLINE_BYTES - length) : 0;
    if (inline > 0) {
      append(data, inline);
    }
    int rest = n - inline;
    if (rest > 0) {
      byte[] chunk = new byte[rest];
      data.get(chunk);
      if (spilled == null) {
        spilled = new ArrayList<>();
      }
      spilled.add(chunk);
      spilledBytes += rest;
    }
  }
}

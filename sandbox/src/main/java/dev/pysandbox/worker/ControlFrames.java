package dev.pysandbox.worker;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.Json;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The read side of a connection's control channel ({@link FrameReader}'s sink): which frames the
 * connection wants now and how big each may be, parsing them (big ones off the hub thread while the
 * socket is not read), and the limits on what is not a frame of the request in flight, past which
 * the sandbox is cut off, with the counts they are checked against. Hub thread only, but for the
 * big frames' parse and {@link #newRequest}.
 */
final class ControlFrames implements FrameReader.Sink {
  // The connection's logger: the line keeps the name it had when the connection counted.
  private static final Logger log = LoggerFactory.getLogger(WorkerConnection.class);
  private static final ObjectMapper JSON = Json.mapper();
  private static final long MIB = 1024 * 1024;

  /** Levels a frame adds above a value ({@code {"outputs":{"values":{"k": value}}}}, and spare). */
  private static final int FRAME_LEVELS = 8;

  /** Reads the sandbox's frames: no deeper than a value may be, plus the frame around it. */
  private static final ObjectMapper FRAMES =
      new ObjectMapper(
          com.fasterxml.jackson.core.JsonFactory.builder()
              .streamReadConstraints(
                  com.fasterxml.jackson.core.StreamReadConstraints.builder()
                      .maxNestingDepth(WorkerConnection.MAX_VALUE_DEPTH + FRAME_LEVELS)
                      .build())
              .build());

  /** Largest answer ({@code done} frame: result, figures, {@code __outputs__}, context). */
  static final long MAX_RESULT_FRAME_BYTES = 64 * MIB;

  /** Display frames of one request, together; displays past it are dropped and counted. */
  static final long MAX_DISPLAY_BYTES = 32 * MIB;

  /** Largest {@code ready} frame, and largest line that is not a frame the runner may send now. */
  static final long MAX_CONTROL_LINE_BYTES = MIB;

  /** Control bytes per request (or per idle time) that are not frames of the request in flight. */
  static final long MAX_IGNORED_BYTES = 8 * MIB;

  private final WorkerConnection c;
  private final WorkerHub hub;
  private final FrameReader frames = new FrameReader(this);

  // Counted on the hub thread; the first is reset by each request, the second read by tests.
  private final AtomicLong ignoredBytes = new AtomicLong();
  private final AtomicLong ignoredLines = new AtomicLong();
  private long ignoredLineBytes;
  private boolean paused;
  private ByteBuffer held;

  ControlFrames(WorkerConnection c, WorkerHub hub) {
    this.c = c;
    this.hub = hub;
  }

  /** A request begins: what is not a frame is counted for it afresh (any thread). */
  void newRequest() {
    ignoredBytes.set(0);
  }

  /** Control lines dropped as garbage or as answers to other requests. */
  long ignoredLines() {
    return ignoredLines.get();
  }

  /** Bytes read from the control socket; what follows a big frame waits for its parse. */
  void onBytes(ByteBuffer data) {
    if (frames.feed(data) && paused && data.hasRemaining()) {
      held = ByteBuffer.allocate(data.remaining()).put(data).flip();
    }
  }

  /** A frame over {@link FrameReader#INLINE_BYTES} was parsed off the hub thread (hub thread). */
  private void afterLargeFrame(FrameReader.Kind kind, JsonNode node, String error, long size) {
    if (!c.isOpen()) {
      return;
    }
    onFrame(kind, node, error, size);
    paused = false;
    ByteBuffer rest = held;
    held = null;
    if (rest != null && c.isOpen()) {
      onBytes(rest);
    }
    if (!paused && c.isOpen()) {
      hub.reading(c.ctlKey(), true);
    }
  }

  /**
   * One whole frame the connection wanted, parsed ({@code node}) or not ({@code error}).
   *
   * @return true when the connection is closed
   */
  private boolean onFrame(FrameReader.Kind kind, JsonNode node, String error, long size) {
    switch (kind) {
      case READY -> {
        if (node instanceof ObjectNode frame) {
          c.readyFrame(frame);
        }
      }
      case DISPLAY -> c.display(node, size);
      case DONE -> c.complete(node instanceof ObjectNode frame ? frame : failedAnswer(error));
      case SUBCALL -> {
        if (node instanceof ObjectNode frame) {
          c.subcall(frame);
        } else {
          c.violate("its llm_query frame could not be read: " + error);
        }
      }
      case OTHER -> {}
    }
    return !c.isOpen();
  }

  /** The answer the runner sent could not be taken: the request fails, saying why. */
  private static ObjectNode failedAnswer(String why) {
    ObjectNode frame = JSON.createObjectNode();
    frame.put("type", "done");
    frame.put("status", "error");
    ObjectNode error = frame.putObject("error");
    error.put("name", "pysandbox.FrameError");
    error.put("value", why);
    error.put("traceback", "");
    return frame;
  }

  private static String unreadable(IOException e) {
    if (e instanceof com.fasterxml.jackson.core.exc.StreamConstraintsException c
        && String.valueOf(c.getOriginalMessage()).contains("nesting depth")) {
      return "the run's answer holds a value (in its result, __outputs__, a display or its"
          + " context) nested deeper than "
          + WorkerConnection.MAX_VALUE_DEPTH
          + " levels, the most a value the sandbox sends may have: flatten it, or send it as a"
          + " JSON string";
    }
    String why = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
    return "the run's answer (its result, __outputs__ or context) could not be read: " + why;
  }

  @Override
  public FrameReader.Kind classify(byte[] prefix, int length) {
    return c.kindOf(prefix, length);
  }

  @Override
  public long limit(FrameReader.Kind kind) {
    return switch (kind) {
      case READY -> MAX_CONTROL_LINE_BYTES;
      case DONE -> MAX_RESULT_FRAME_BYTES;
      case DISPLAY -> c.displayRoom(MAX_DISPLAY_BYTES);
      case SUBCALL -> Subcalls.MAX_FRAME_BYTES;
      case OTHER -> 0;
    };
  }

  @Override
  public boolean frame(FrameReader.Kind kind, byte[] bytes, int length) {
    JsonNode node = null;
    String error = null;
    try {
      node = FRAMES.readTree(bytes, 0, length);
    } catch (IOException e) {
      error = unreadable(e);
    }
    return onFrame(kind, node, error, length);
  }

  @Override
  public boolean largeFrame(FrameReader.Kind kind, List<byte[]> chunks, long size) {
    paused = true;
    hub.reading(c.ctlKey(), false);
    hub.parse(
        () -> {
          JsonNode node = null;
          String error = null;
          try (InputStream in = stream(chunks)) {
            node = FRAMES.readTree(in);
          } catch (IOException e) {
            error = unreadable(e);
          }
          JsonNode parsed = node;
          String why = error;
          hub.execute(() -> afterLargeFrame(kind, parsed, why, size));
        });
    return true;
  }

  @Override
  public boolean tooLong(FrameReader.Kind kind, long limit) {
    switch (kind) {
      case READY -> c.violate("its ready frame passed " + limit + " bytes");
      case DISPLAY -> c.dropDisplay();
      case DONE ->
          c.complete(
              failedAnswer(
                  "the run's answer (its result, __outputs__ or context) was over "
                      + limit / MIB
                      + " MiB, the most one answer may carry"));
      case SUBCALL ->
          c.violate(
              "its llm_query frame passed "
                  + limit
                  + " bytes (the runner sends prompts of at most "
                  + Subcalls.MAX_PROMPT_BYTES / 1024
                  + " KiB)");
      case OTHER -> {}
    }
    return !c.isOpen();
  }

  @Override
  public boolean ignored(int bytes, boolean end) {
    long total = ignoredBytes.addAndGet(bytes);
    ignoredLineBytes += bytes;
    if (ignoredLineBytes > MAX_CONTROL_LINE_BYTES) {
      c.violate(
          "it wrote a control line of over "
              + MAX_CONTROL_LINE_BYTES / MIB
              + " MiB that is not a frame of the request in flight (limit "
              + MAX_CONTROL_LINE_BYTES / MIB
              + " MiB)");
      return true;
    }
    if (total > MAX_IGNORED_BYTES) {
      c.violate(
          "it wrote over "
              + MAX_IGNORED_BYTES / MIB
              + " MiB to its control socket that are not frames of the request in flight"
              + " (limit "
              + MAX_IGNORED_BYTES / MIB
              + " MiB per run)");
      return true;
    }
    if (end) {
      long lines = ignoredLines.incrementAndGet();
      if (log.isDebugEnabled()) {
        log.debug(
            "worker {}: ignored control line #{} ({} bytes)",
            c.sandboxId(),
            lines,
            ignoredLineBytes);
      }
      ignoredLineBytes = 0;
    }
    return false;
  }

  private static InputStream stream(List<byte[]> chunks) {
    List<InputStream> parts = new ArrayList<>(chunks.size());
    for (byte[] b : chunks) {
      parts.add(new ByteArrayInputStream(b));
    }
    return new SequenceInputStream(Collections.enumeration(parts));
  }
}

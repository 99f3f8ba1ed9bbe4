package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.Json;
import dev.pysandbox.util.RandomIds;
import dev.pysandbox.worker.RunnerSockets.Channel;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's end of the worker protocol with one runner: a control channel (JSON lines) and the
 * user's stdout and stderr (raw bytes), all three non-blocking sockets served by the {@link
 * WorkerHub}'s one selector thread.
 *
 * <p>One request is in flight at a time. Its id is random, so frames user code forges can only ever
 * answer the request that is running (its own). Every frame starts with its id and type in a fixed
 * prefix, checked before anything else of the line is kept ({@link FrameReader}): lines with any
 * other id, and lines that are not frames, are skipped unread. A sandbox that breaks the protocol
 * (a control line over {@link ControlFrames#MAX_CONTROL_LINE_BYTES} that is not a frame it may
 * send, over {@link ControlFrames#MAX_IGNORED_BYTES} of such lines per request) is cut off, and
 * {@link #protocolViolation} says why. Frames over {@link FrameReader#INLINE_BYTES} are parsed off
 * the hub thread while this connection's control socket is not read, so one sandbox's big answers
 * never delay another's. The code's {@code llm_query} calls reach the request's listener through
 * {@link Subcalls}, off the hub thread.
 *
 * <p>Output produced between requests is attributed to the next one; past {@code idleOutputMax}
 * bytes of it the hub stops reading this sandbox's stdout and stderr (the writer blocks instead of
 * costing the server CPU) and asks the runner to kill every other process in the sandbox ({@link
 * IdleOutputGuard}). The sockets themselves are {@link RunnerSockets}'. Reads happen on the hub
 * thread; {@link #request}, {@link #interrupt} and {@link #close} may be called from any thread.
 *
 * <p>(Still the longest of the worker classes because it is one state machine: the request in
 * flight, its frames, its output and the limits on all three share one lock.)
 */
public final class WorkerConnection implements Worker {
  private static final Logger log = LoggerFactory.getLogger(WorkerConnection.class);
  private static final ObjectMapper JSON = Json.mapper();

  /**
   * Most levels of nesting a value the sandbox sends may have (an {@code __outputs__} entry, a
   * result, a display's JSON, a context variable): the runner refuses deeper ones before it
   * serialises them, and the server reads no deeper, so that nothing the code builds can overflow a
   * stack of the server's (Jackson's own limit, 1000, is past what its recursive code survives).
   */
  public static final int MAX_VALUE_DEPTH = 64;

  private final String sandboxId;
  private final byte[] token;
  private final int outputLimit;
  private final WorkerHub hub;
  private final RunnerSockets sockets;
  private final CompletableFuture<ObjectNode> ready = new CompletableFuture<>();
  private final CompletableFuture<String> closed = new CompletableFuture<>();
  private final ControlFrames frames;
  private final ControlWriter writer;
  private final IdleOutputGuard idle;
  private final Subcalls subcalls;

  private ObjectNode readyFrame;
  private OutputCapture stdout;
  private OutputCapture stderr;
  private PendingRequest current;
  private volatile String violation;

  // Hub thread only.
  private boolean closing;

  WorkerConnection(
      String sandboxId, byte[] token, int outputLimit, long idleOutputMax, WorkerHub hub) {
    this.sandboxId = sandboxId;
    this.token = token;
    this.outputLimit = outputLimit;
    this.hub = hub;
    this.sockets = new RunnerSockets(hub);
    this.idle = new IdleOutputGuard(sandboxId, idleOutputMax, sockets, this::send);
    this.stdout = new OutputCapture(outputLimit);
    this.stderr = new OutputCapture(outputLimit);
    this.frames = new ControlFrames(this, hub);
    this.writer = new ControlWriter(hub, this::close);
    this.subcalls = new Subcalls(sandboxId, hub.blocking(), this::send);
  }

  @Override
  public String sandboxId() {
    return sandboxId;
  }

  byte[] token() {
    return token;
  }

  @Override
  public CompletableFuture<ObjectNode> ready() {
    return ready;
  }

  @Override
  public CompletableFuture<String> closed() {
    return closed;
  }

  @Override
  public boolean isOpen() {
    return !closed.isDone();
  }

  @Override
  public CompletableFuture<WorkerReply> request(String op, ObjectNode payload) {
    return request(op, payload, RequestListener.NONE);
  }

  /**
   * {@link #request(String, ObjectNode)}, telling {@code listener} the request's output as it
   * arrives (output that arrived before the request leads its answer but is not told).
   */
  @Override
  public CompletableFuture<WorkerReply> request(
      String op, ObjectNode payload, RequestListener listener) {
    PendingRequest p;
    boolean resumeOutput;
    synchronized (this) {
      if (closed.isDone()) {
        throw new IllegalStateException("worker " + sandboxId + " is closed: " + closed.join());
      }
      if (current != null) {
        throw new IllegalStateException("worker " + sandboxId + " is busy with " + current.id);
      }
      String id = "r" + RandomIds.hex(8);
      resumeOutput = idle.begin(id);
      p = new PendingRequest(id, stdout, stderr, idle.leading(), listener);
      current = p;
      frames.newRequest();
    }
    if (resumeOutput) {
      hub.execute(() -> sockets.readOutput(true));
    }
    ObjectNode msg = payload == null ? JSON.createObjectNode() : payload.deepCopy();
    msg.put("op", op);
    msg.put("id", p.id);
    send(msg);
    return p.future;
  }

  @Override
  public void interrupt() {
    String id;
    synchronized (this) {
      id = current == null ? null : current.id;
    }
    if (id != null) {
      ObjectNode msg = JSON.createObjectNode();
      msg.put("op", "interrupt");
      msg.put("id", id);
      send(msg);
      subcalls.interrupted(id);
    }
  }

  @Override
  public synchronized WorkerReply partial() {
    if (current != null) {
      return current.reply(JSON.createObjectNode());
    }
    return new WorkerReply(
        JSON.createObjectNode(), stdout.snapshot(), stderr.snapshot(), List.of(), 0, 0);
  }

  /**
   * Bytes written to stdout and stderr by the request in flight (or since the last one), kept or
   * not; cheap enough to poll.
   */
  @Override
  public synchronized long outputBytes() {
    return current != null ? current.outputBytes() : stdout.total() + stderr.total();
  }

  /**
   * Bytes of stdout and stderr that arrived while no request was in flight, before the latest
   * request began (they lead that request's captured output, and are not counted against its own
   * output limit by {@link #outputBytes}).
   */
  @Override
  public synchronized long idleOutputBytes() {
    return idle.leading();
  }

  @Override
  public String protocolViolation() {
    return violation;
  }

  @Override
  public void close(String reason) {
    hub.execute(() -> lost(reason));
  }

  // -- hub side ----------------------------------------------------------------------------------

  synchronized boolean attach(Channel channel, SocketChannel socket, SelectionKey key) {
    if (closed.isDone() || !sockets.attach(channel, socket, key)) {
      return false;
    }
    maybeReady();
    return true;
  }

  private void maybeReady() {
    if (readyFrame != null && sockets.connected() && !ready.isDone()) {
      ready.complete(readyFrame);
    }
  }

  void onData(Channel channel, ByteBuffer data) {
    switch (channel) {
      case OUT -> onOutput(true, data);
      case ERR -> onOutput(false, data);
      case CTL -> frames.onBytes(data);
      case LIFE -> data.position(data.limit()); // says nothing that matters; read and dropped
    }
  }

  private void onOutput(boolean isOut, ByteBuffer data) {
    OutputCapture capture;
    long idleBytes = -1;
    RequestListener listener;
    synchronized (this) {
      capture = isOut ? stdout : stderr;
      listener = current == null ? null : current.listener;
      if (current == null) {
        idleBytes = idle.arrived(data.remaining());
      }
    }
    if (listener != null && listener != RequestListener.NONE) {
      try {
        listener.output(!isOut, data.duplicate());
      } catch (RuntimeException e) {
        log.warn("worker {}: an output listener failed: {}", sandboxId, e.toString());
      }
    }
    capture.append(data);
    if (idleBytes >= 0 && !closing) {
      idle.stopWriters(idleBytes);
    }
  }

  void onEof(Channel channel) {
    if (channel == Channel.CTL) {
      lost("the runner's control channel closed (the process exited or was killed)");
    }
  }

  // -- what ControlFrames asks and tells (hub thread) ---------------------------------------------

  SelectionKey ctlKey() {
    return sockets.key(Channel.CTL);
  }

  /** Which frame a control line starting with {@code prefix} is, for what is wanted now. */
  synchronized FrameReader.Kind kindOf(byte[] prefix, int length) {
    return FrameReader.kindOf(
        prefix, length, readyFrame == null, current == null ? null : current.prefix);
  }

  /** Bytes the request in flight may still take in displays (of {@code max} in all). */
  synchronized long displayRoom(long max) {
    return current == null ? 0 : current.displayRoom(max);
  }

  synchronized void readyFrame(ObjectNode frame) {
    if (readyFrame == null) {
      readyFrame = frame;
      maybeReady();
    }
  }

  /** A display frame of the request in flight, parsed or not ({@code node} null). */
  void display(JsonNode node, long size) {
    RequestListener listener = null;
    ObjectNode shown = null;
    synchronized (this) {
      if (current != null) {
        shown = current.display(node, size);
        listener = current.listener;
      }
    }
    if (shown != null) {
      try {
        listener.display(shown, size);
      } catch (RuntimeException e) {
        log.warn("worker {}: a display listener failed: {}", sandboxId, e.toString());
      }
    }
  }

  /** A parsed {@code subcall} frame of the request in flight (hub thread). */
  void subcall(JsonNode node) {
    PendingRequest p;
    synchronized (this) {
      p = current;
    }
    String broken = p == null ? null : subcalls.asked(p.id, p.listener, node);
    if (broken != null) {
      violate(broken);
    }
  }

  synchronized void dropDisplay() {
    if (current != null) {
      current.display(null, 0);
    }
  }

  /** The request in flight is answered. */
  void complete(ObjectNode frame) {
    drain();
    PendingRequest done;
    synchronized (this) {
      done = current;
      if (done == null) {
        return;
      }
      current = null;
      stdout = new OutputCapture(outputLimit);
      stderr = new OutputCapture(outputLimit);
    }
    subcalls.ended();
    done.future.complete(done.reply(frame));
  }

  /**
   * The sandbox broke the protocol: it is cut off, and whoever owns it ends it ({@link
   * #protocolViolation} says why).
   */
  void violate(String what) {
    String reason = "protocol violation: " + what;
    violation = what;
    log.warn("security: sandbox {} broke the worker protocol: {}; it is cut off", sandboxId, what);
    lost(reason);
  }

  /** Control lines dropped as garbage or as answers to other requests (for tests). */
  long ignoredLines() {
    return frames.ignoredLines();
  }

  /** Reads whatever stdout and stderr already hold: it was written before the frame now read. */
  private void drain() {
    sockets.drain(this);
  }

  private void lost(String reason) {
    if (closing || closed.isDone()) {
      return;
    }
    closing = true;
    drain();
    PendingRequest p;
    synchronized (this) {
      p = current;
      current = null;
    }
    subcalls.ended();
    sockets.close();
    closed.complete(reason);
    boolean violated = violation != null;
    if (!ready.isDone()) {
      ready.completeExceptionally(new WorkerLostException(reason, partial(), violated));
    }
    if (p != null) {
      p.future.completeExceptionally(
          new WorkerLostException(reason, p.reply(JSON.createObjectNode()), violated));
    }
    hub.forget(this);
  }

  // -- writes ------------------------------------------------------------------------------------

  private void send(ObjectNode msg) {
    // ctl is read first: once it is set, so is its key (both in one attach).
    SocketChannel channel = sockets.socket(Channel.CTL);
    writer.send(msg, channel, sockets.key(Channel.CTL), sandboxId);
  }

  /** Called by the hub when the control socket can take more bytes; true when all is written. */
  boolean flushWrites() {
    return writer.flush(sockets.socket(Channel.CTL));
  }

  static byte[] newToken() {
    return RandomIds.hex(16).getBytes(StandardCharsets.US_ASCII);
  }
}

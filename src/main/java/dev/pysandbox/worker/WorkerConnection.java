package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
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
 * answer the request that is running (its own); frames with any other id, and lines that are not
 * frames, are dropped. Output produced between requests is attributed to the next one. Reads happen
 * on the hub thread; {@link #request}, {@link #interrupt} and {@link #close} may be called from any
 * thread.
 */
public final class WorkerConnection {
  private static final Logger log = LoggerFactory.getLogger(WorkerConnection.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SecureRandom RANDOM = new SecureRandom();
  static final int MAX_FRAME_BYTES = 64 * 1024 * 1024;
  static final long MAX_DISPLAY_BYTES = 32L * 1024 * 1024;

  enum Channel {
    CTL,
    OUT,
    ERR
  }

  private final String sandboxId;
  private final byte[] token;
  private final int outputLimit;
  private final WorkerHub hub;
  private final CompletableFuture<ObjectNode> ready = new CompletableFuture<>();
  private final CompletableFuture<String> closed = new CompletableFuture<>();
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();
  private final ArrayDeque<ByteBuffer> writes = new ArrayDeque<>();

  private SocketChannel ctl;
  private SocketChannel out;
  private SocketChannel err;
  private SelectionKey ctlKey;
  private ObjectNode readyFrame;
  private OutputCapture stdout;
  private OutputCapture stderr;
  private Pending current;
  private long ignoredLines;

  private static final class Pending {
    final String id;
    final CompletableFuture<WorkerReply> future = new CompletableFuture<>();
    final OutputCapture out;
    final OutputCapture err;
    final List<ObjectNode> displays = new ArrayList<>();
    final long started = System.nanoTime();
    long displayBytes;
    int dropped;

    Pending(String id, OutputCapture out, OutputCapture err) {
      this.id = id;
      this.out = out;
      this.err = err;
    }

    WorkerReply reply(ObjectNode frame) {
      return new WorkerReply(
          frame,
          out.snapshot(),
          err.snapshot(),
          List.copyOf(displays),
          dropped,
          System.nanoTime() - started);
    }
  }

  WorkerConnection(String sandboxId, byte[] token, int outputLimit, WorkerHub hub) {
    this.sandboxId = sandboxId;
    this.token = token;
    this.outputLimit = outputLimit;
    this.hub = hub;
    this.stdout = new OutputCapture(outputLimit);
    this.stderr = new OutputCapture(outputLimit);
  }

  public String sandboxId() {
    return sandboxId;
  }

  byte[] token() {
    return token;
  }

  /** Completes with the runner's {@code ready} frame once all three channels are connected. */
  public CompletableFuture<ObjectNode> ready() {
    return ready;
  }

  /** Completes with a reason when the control channel closes; never completes exceptionally. */
  public CompletableFuture<String> closed() {
    return closed;
  }

  public boolean isOpen() {
    return !closed.isDone();
  }

  /**
   * Sends one request and completes when the runner answers it. Completes exceptionally with {@link
   * WorkerLostException} (holding the output so far) if the runner goes away first.
   *
   * @throws IllegalStateException when another request is in flight or the connection is closed
   */
  public CompletableFuture<WorkerReply> request(String op, ObjectNode payload) {
    Pending p;
    synchronized (this) {
      if (closed.isDone()) {
        throw new IllegalStateException("worker " + sandboxId + " is closed: " + closed.join());
      }
      if (current != null) {
        throw new IllegalStateException("worker " + sandboxId + " is busy with " + current.id);
      }
      String id = "r" + HexFormat.of().formatHex(randomBytes(8));
      p = new Pending(id, stdout, stderr);
      current = p;
    }
    ObjectNode msg = payload == null ? JSON.createObjectNode() : payload.deepCopy();
    msg.put("op", op);
    msg.put("id", p.id);
    send(msg);
    return p.future;
  }

  /** Asks the runner to raise KeyboardInterrupt in the request that is running, if any. */
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
    }
  }

  /** The output of the request in flight so far (or of the idle time since the last one). */
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
  public synchronized long outputBytes() {
    return current != null
        ? current.out.total() + current.err.total()
        : stdout.total() + stderr.total();
  }

  /** Closes the sockets; a request in flight fails with {@link WorkerLostException}. */
  public void close(String reason) {
    hub.execute(() -> lost(reason));
  }

  // -- hub side ----------------------------------------------------------------------------------

  synchronized boolean attach(Channel channel, SocketChannel socket, SelectionKey key) {
    SocketChannel existing =
        switch (channel) {
          case CTL -> ctl;
          case OUT -> out;
          case ERR -> err;
        };
    if (existing != null || closed.isDone()) {
      return false;
    }
    switch (channel) {
      case CTL -> {
        ctl = socket;
        ctlKey = key;
      }
      case OUT -> out = socket;
      case ERR -> err = socket;
    }
    maybeReady();
    return true;
  }

  private void maybeReady() {
    if (readyFrame != null && ctl != null && out != null && err != null && !ready.isDone()) {
      ready.complete(readyFrame);
    }
  }

  void onData(Channel channel, ByteBuffer data) {
    switch (channel) {
      case OUT -> captureOf(true).append(data);
      case ERR -> captureOf(false).append(data);
      case CTL -> onControlBytes(data);
    }
  }

  private synchronized OutputCapture captureOf(boolean isOut) {
    return isOut ? stdout : stderr;
  }

  void onEof(Channel channel) {
    if (channel == Channel.CTL) {
      lost("the runner's control channel closed (the process exited or was killed)");
    }
  }

  private void onControlBytes(ByteBuffer data) {
    while (data.hasRemaining()) {
      int start = data.position();
      int end = start;
      int limit = data.limit();
      while (end < limit && data.get(end) != '\n') {
        end++;
      }
      int n = end - start;
      if (line.size() + n > MAX_FRAME_BYTES) {
        lost("the runner sent a control frame over " + MAX_FRAME_BYTES + " bytes");
        return;
      }
      byte[] chunk = new byte[n];
      data.get(chunk);
      line.write(chunk, 0, n);
      if (end == limit) {
        return;
      }
      data.get(); // the newline
      if (line.size() > 0) {
        byte[] bytes = line.toByteArray();
        line.reset();
        onLine(bytes);
      }
    }
  }

  private void onLine(byte[] bytes) {
    JsonNode node;
    try {
      node = JSON.readTree(bytes);
    } catch (IOException e) {
      node = null;
    }
    if (!(node instanceof ObjectNode frame) || !frame.path("type").isTextual()) {
      noteIgnored(bytes);
      return;
    }
    String type = frame.path("type").asText();
    String id = frame.path("id").asText(null);
    synchronized (this) {
      if (type.equals("ready")) {
        if (readyFrame == null) {
          readyFrame = frame;
          maybeReady();
        }
        return;
      }
      if (current == null || !current.id.equals(id)) {
        noteIgnored(bytes);
        return;
      }
      if (type.equals("display")) {
        JsonNode data = frame.path("data");
        if (data instanceof ObjectNode bundle
            && current.displayBytes + bytes.length <= MAX_DISPLAY_BYTES) {
          current.displayBytes += bytes.length;
          current.displays.add(bundle);
        } else {
          current.dropped++;
        }
        return;
      }
      if (!type.equals("done")) {
        noteIgnored(bytes);
        return;
      }
    }
    drain();
    Pending done;
    synchronized (this) {
      done = current;
      current = null;
      stdout = new OutputCapture(outputLimit);
      stderr = new OutputCapture(outputLimit);
    }
    done.future.complete(done.reply(frame));
  }

  /** Control lines dropped as garbage or as answers to other requests (for tests). */
  synchronized long ignoredLines() {
    return ignoredLines;
  }

  private synchronized void noteIgnored(byte[] bytes) {
    ignoredLines++;
    if (log.isDebugEnabled()) {
      log.debug(
          "worker {}: ignored control line #{} ({} bytes)", sandboxId, ignoredLines, bytes.length);
    }
  }

  /** Reads whatever stdout and stderr already hold: it was written before the frame now read. */
  private void drain() {
    hub.drainNow(this, Channel.OUT, out);
    hub.drainNow(this, Channel.ERR, err);
  }

  private void lost(String reason) {
    if (closed.isDone()) {
      return;
    }
    drain();
    Pending p;
    synchronized (this) {
      p = current;
      current = null;
    }
    hub.closeQuietly(ctl);
    hub.closeQuietly(out);
    hub.closeQuietly(err);
    closed.complete(reason);
    if (!ready.isDone()) {
      ready.completeExceptionally(new WorkerLostException(reason, partial()));
    }
    if (p != null) {
      p.future.completeExceptionally(
          new WorkerLostException(reason, p.reply(JSON.createObjectNode())));
    }
    hub.forget(this);
  }

  // -- writes ------------------------------------------------------------------------------------

  private void send(ObjectNode msg) {
    byte[] bytes;
    try {
      bytes = JSON.writeValueAsBytes(msg);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    ByteBuffer buf = ByteBuffer.allocate(bytes.length + 1).put(bytes).put((byte) '\n').flip();
    synchronized (writes) {
      SocketChannel channel;
      synchronized (this) {
        channel = ctl;
      }
      if (channel == null) {
        throw new IllegalStateException("worker " + sandboxId + " is not connected");
      }
      if (writes.isEmpty()) {
        try {
          channel.write(buf);
        } catch (IOException e) {
          close("writing to the runner failed: " + e.getMessage());
          return;
        }
      }
      if (buf.hasRemaining()) {
        writes.add(buf);
        hub.wantWrite(ctlKey);
      }
    }
  }

  /** Called by the hub when the control socket can take more bytes; true when all is written. */
  boolean flushWrites() {
    synchronized (writes) {
      try {
        while (!writes.isEmpty()) {
          ByteBuffer head = writes.peek();
          ctl.write(head);
          if (head.hasRemaining()) {
            return false;
          }
          writes.poll();
        }
      } catch (IOException e) {
        writes.clear();
        hub.execute(() -> lost("writing to the runner failed: " + e.getMessage()));
      }
      return true;
    }
  }

  private static byte[] randomBytes(int n) {
    byte[] b = new byte[n];
    RANDOM.nextBytes(b);
    return b;
  }

  static byte[] newToken() {
    return HexFormat.of().formatHex(randomBytes(16)).getBytes(StandardCharsets.US_ASCII);
  }
}

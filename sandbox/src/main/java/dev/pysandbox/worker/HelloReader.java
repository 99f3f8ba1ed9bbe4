package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.api.Json;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub's first read of every new socket: its hello line, naming its sandbox, that sandbox's
 * one-time token and the channel it is (ctl, out, err or life). A socket whose hello is unknown,
 * wrong or too long is closed; a good one is bound to its connection ({@link Endpoint}) and what
 * followed its hello is that channel's first data. Hub thread only.
 */
final class HelloReader {
  private static final Logger log = LoggerFactory.getLogger(HelloReader.class);
  private static final ObjectMapper JSON = Json.mapper();
  private static final int MAX_HELLO = 1024;

  /**
   * A connection still saying hello. One that came through a {@link WorkerDoor} may only name the
   * door's sandbox ({@code only}).
   */
  static final class Hello {
    final ByteBuffer buf = ByteBuffer.allocate(MAX_HELLO);
    final WorkerConnection only;

    Hello(WorkerConnection only) {
      this.only = only;
    }
  }

  /** A socket bound to its connection and channel. */
  record Endpoint(WorkerConnection connection, RunnerSockets.Channel channel) {}

  private final Map<String, WorkerConnection> expected;
  private final WorkerHub hub;

  HelloReader(Map<String, WorkerConnection> expected, WorkerHub hub) {
    this.expected = expected;
    this.hub = hub;
  }

  void read(SelectionKey key, SocketChannel s, Hello hello) throws IOException {
    int n;
    try {
      n = s.read(hello.buf);
    } catch (IOException ex) {
      n = -1;
    }
    int newline = -1;
    for (int i = 0; i < hello.buf.position(); i++) {
      if (hello.buf.get(i) == '\n') {
        newline = i;
        break;
      }
    }
    if (newline < 0) {
      if (n < 0 || !hello.buf.hasRemaining()) {
        key.cancel();
        hub.closeQuietly(s);
      }
      return;
    }
    byte[] line = new byte[newline];
    hello.buf.get(0, line);
    Endpoint endpoint = bind(line, hello.only);
    if (endpoint == null) {
      key.cancel();
      hub.closeQuietly(s);
      return;
    }
    if (!endpoint.connection().attach(endpoint.channel(), s, key)) {
      log.warn(
          "rejected a second {} channel for {}",
          endpoint.channel(),
          endpoint.connection().sandboxId());
      key.cancel();
      hub.closeQuietly(s);
      return;
    }
    key.attach(endpoint);
    int leftover = hello.buf.position() - newline - 1;
    if (leftover > 0) {
      ByteBuffer rest = ByteBuffer.allocate(leftover);
      rest.put(0, hello.buf, newline + 1, leftover);
      endpoint.connection().onData(endpoint.channel(), rest);
    }
    if (n < 0) {
      key.cancel();
      hub.closeQuietly(s);
      endpoint.connection().onEof(endpoint.channel());
    }
  }

  private Endpoint bind(byte[] line, WorkerConnection only) {
    try {
      JsonNode hello = JSON.readTree(line);
      WorkerConnection c = expected.get(hello.path("sandbox").asText(""));
      byte[] token = hello.path("token").asText("").getBytes(StandardCharsets.US_ASCII);
      if (c == null || (only != null && c != only) || !MessageDigest.isEqual(c.token(), token)) {
        log.warn("rejected a worker connection with an unknown sandbox or token");
        return null;
      }
      RunnerSockets.Channel channel =
          switch (hello.path("channel").asText("")) {
            case "ctl" -> RunnerSockets.Channel.CTL;
            case "out" -> RunnerSockets.Channel.OUT;
            case "err" -> RunnerSockets.Channel.ERR;
            case "life" -> RunnerSockets.Channel.LIFE;
            default -> null;
          };
      return channel == null ? null : new Endpoint(c, channel);
    } catch (IOException e) {
      return null;
    }
  }
}

package dev.pysandbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.Fast;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A door of the worker hub, as a container's runner uses it: it lets its own sandbox's channels in,
 * and nothing else, and closes once the runner is ready.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@Fast
class WorkerHubDoorTest {
  @TempDir Path dir;
  WorkerHub hub;
  final List<SocketChannel> opened = new ArrayList<>();

  @BeforeEach
  void open() throws IOException {
    hub = WorkerHub.open(dir.resolve("hub/hub.sock"));
  }

  @AfterEach
  void close() throws IOException {
    for (SocketChannel c : opened) {
      c.close();
    }
    hub.close();
  }

  private SocketChannel connect(Path socket, String hello) throws IOException {
    SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
    opened.add(c);
    c.connect(UnixDomainSocketAddress.of(socket));
    c.write(ByteBuffer.wrap((hello + "\n").getBytes(StandardCharsets.UTF_8)));
    return c;
  }

  private static String hello(String sandbox, String token, String channel) {
    return "{\"sandbox\":\""
        + sandbox
        + "\",\"token\":\""
        + token
        + "\",\"channel\":\""
        + channel
        + "\"}";
  }

  /** True when the hub closed the connection (a read sees the end). */
  private static boolean closedByHub(SocketChannel c) throws Exception {
    c.configureBlocking(false);
    ByteBuffer one = ByteBuffer.allocate(1);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    try (Selector readable = Selector.open()) {
      c.register(readable, SelectionKey.OP_READ);
      for (long left = 5_000; left > 0; left = (deadline - System.nanoTime()) / 1_000_000) {
        if (readable.select(left) == 0) {
          continue;
        }
        readable.selectedKeys().clear();
        try {
          if (c.read(one) < 0) {
            return true;
          }
        } catch (IOException e) {
          return true; // reset
        }
        one.clear();
      }
    }
    return false;
  }

  @Test
  void door_letsItsSandboxIn_thenCloses_andItsSocketIsGone() throws Exception {
    WorkerConnection c = hub.expect("sbx-a-1", 1 << 20, 1 << 20);
    Path socket = dir.resolve("door/w.sock");
    Files.createDirectories(socket.getParent());
    WorkerDoor door = hub.openDoor(c, socket);
    assertThat(door.socket()).isEqualTo(socket);
    assertThat(Files.getPosixFilePermissions(socket))
        .isEqualTo(PosixFilePermissions.fromString("rw-rw-rw-"));
    String token = WorkerHub.token(c);
    SocketChannel life = connect(socket, hello("sbx-a-1", token, "life"));
    SocketChannel ctl = connect(socket, hello("sbx-a-1", token, "ctl"));
    connect(socket, hello("sbx-a-1", token, "out"));
    connect(socket, hello("sbx-a-1", token, "err"));
    ctl.write(
        ByteBuffer.wrap("\n{\"id\":null,\"type\":\"ready\"}\n".getBytes(StandardCharsets.UTF_8)));
    c.ready().get(10, TimeUnit.SECONDS);
    Await.until("the door's socket is deleted", () -> Files.exists(socket), exists -> !exists);
    assertThatThrownBy(() -> connect(socket, hello("sbx-a-1", token, "ctl")))
        .isInstanceOf(IOException.class);
    c.close("done");
    assertThat(closedByHub(life)).as("the life channel ends with the connection").isTrue();
  }

  @Test
  void door_refusesAnotherSandboxsHello_andAWrongToken() throws Exception {
    WorkerConnection mine = hub.expect("sbx-a-2", 1 << 20, 1 << 20);
    WorkerConnection other = hub.expect("sbx-a-3", 1 << 20, 1 << 20);
    Path socket = dir.resolve("door2/w.sock");
    Files.createDirectories(socket.getParent());
    hub.openDoor(mine, socket);
    SocketChannel stranger = connect(socket, hello("sbx-a-3", WorkerHub.token(other), "ctl"));
    assertThat(closedByHub(stranger)).as("another sandbox's channel through this door").isTrue();
    SocketChannel forged = connect(socket, hello("sbx-a-2", "0".repeat(32), "ctl"));
    assertThat(closedByHub(forged)).as("a wrong token").isTrue();
    assertThat(mine.ready()).isNotDone();
    assertThat(other.ready()).isNotDone();
  }

  @Test
  void door_takesAFewConnectionsOnly() throws Exception {
    WorkerConnection c = hub.expect("sbx-a-4", 1 << 20, 1 << 20);
    Path socket = dir.resolve("door3/w.sock");
    Files.createDirectories(socket.getParent());
    hub.openDoor(c, socket);
    for (int i = 0; i < 9; i++) {
      try {
        connect(socket, "junk");
      } catch (IOException e) {
        break; // closed already
      }
    }
    Await.until("the flooded door is closed", () -> Files.exists(socket), exists -> !exists);
  }

  @Test
  void door_closesWhenTheConnectionCloses() throws Exception {
    WorkerConnection c = hub.expect("sbx-a-5", 1 << 20, 1 << 20);
    Path socket = dir.resolve("door4/w.sock");
    Files.createDirectories(socket.getParent());
    hub.openDoor(c, socket);
    c.close("never started");
    Await.until("the door is closed", () -> Files.exists(socket), exists -> !exists);
  }
}

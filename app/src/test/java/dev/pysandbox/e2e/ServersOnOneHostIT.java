package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.backend.ProcessTable;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Servers on one host, as root, each with its own data directory or sharing one: what one server
 * mounts, attaches and binds is gone when it stops, whatever the others do, and never touched while
 * it lives. Workspaces here are loop-mounted ext4 images (the server runs as root), so a workspace
 * left mounted anywhere holds a loop device of the host.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@Client
class ServersOnOneHostIT {
  /** The bound: a stopped server's loop devices are free within a second. */
  private static final Duration FREED_WITHIN = Duration.ofSeconds(1);

  @TempDir Path dirA;
  @TempDir Path dirB;
  @TempDir Path dirC;

  /**
   * Issue 23, item 3: each launcher's mount namespace began as a copy of the host's, holding the
   * workspace images the servers started before it had mounted; a private copy never saw them
   * unmounted, so their loop devices stayed attached until that launcher ended. Item 16: a clean
   * stop left its workspaces' empty mount points behind.
   */
  @Test
  void aStoppedServersLoopDevices_areFreeWithinASecond_whileServersOfOtherDataDirectoriesRun()
      throws Exception {
    List<Path> dirs = List.of(dirA, dirB, dirC);
    List<RawMcpClient> servers = new ArrayList<>();
    try {
      for (Path dir : dirs) {
        RawMcpClient c = new RawMcpClient(dir);
        servers.add(c);
        c.initialize();
        for (String session : List.of("one", "two")) {
          assertSucceeded(c.call("run_python", Map.of("session_id", session, "code", "x = 1"), 60));
        }
        assertThat(loopDevicesOf(dir)).as("workspace images of " + dir + " attached").isNotEmpty();
      }
      for (int stopped = 0; stopped < dirs.size(); stopped++) {
        Path dir = dirs.get(stopped);
        RawMcpClient c = servers.get(stopped);
        c.closeStdin();
        assertThat(c.process.waitFor(30, TimeUnit.SECONDS)).as("stopped").isTrue();
        assertThat(c.process.exitValue()).as(c.stderrTail()).isZero();
        Await.until(
            "no loop device backed by an image of " + dir,
            FREED_WITHIN,
            () -> loopDevicesOf(dir),
            List::isEmpty);
        Await.until(
            "no launcher of another server has a mount of " + dir,
            FREED_WITHIN,
            () -> mountsOfIn(dir, dirs),
            List::isEmpty);
        assertThat(list(dir.resolve("sandbox/workspaces")))
            .as("a clean stop leaves no workspace directory")
            .isEmpty();
        assertThat(list(dir.resolve("run")))
            .as("nor its worker hub's socket")
            .noneMatch(p -> p.getFileName().toString().startsWith("io-"));
        for (int i = stopped + 1; i < dirs.size(); i++) {
          JsonNode x =
              servers.get(i).call("run_python", Map.of("session_id", "two", "code", "x + 1"), 60);
          assertThat(
                  x.path("result")
                      .path("structuredContent")
                      .path("result")
                      .path("text/plain")
                      .asText())
              .as("the others' sessions go on: " + x)
              .isEqualTo("2");
        }
      }
    } finally {
      for (RawMcpClient c : servers) {
        c.close();
      }
    }
  }

  /**
   * Issue 23, item 16: the worker-hub socket ({@code run/io-<instance>.sock}) of a server killed
   * with SIGKILL stayed for ever; a server that starts removes it, with the workspaces of the dead
   * one, and never a live server's.
   */
  @Test
  void aKilledServersHubSocket_isRemovedByTheNextStart_andALiveServersIsNot() throws Exception {
    Path run = dirA.resolve("run");
    Path deadSocket;
    try (RawMcpClient killed = new RawMcpClient(dirA)) {
      killed.initialize();
      assertSucceeded(killed.call("run_python", Map.of("session_id", "s", "code", "x = 1"), 60));
      deadSocket = single(hubSockets(run));
      killed.process.destroyForcibly();
      assertThat(killed.process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    String deadInstance = deadSocket.getFileName().toString().replaceAll("^io-|\\.sock$", "");
    assertThat(deadSocket).as("SIGKILL leaves the socket").exists();
    try (RawMcpClient live = new RawMcpClient(dirA)) {
      live.initialize();
      assertSucceeded(live.call("run_python", Map.of("session_id", "t", "code", "y = 1"), 60));
      Await.until(
          "the killed server's socket and workspaces are gone",
          () -> {
            List<Path> left = new ArrayList<>(hubSockets(run));
            left.addAll(
                list(dirA.resolve("sandbox/workspaces")).stream()
                    .filter(p -> p.getFileName().toString().contains(deadInstance))
                    .toList());
            return left;
          },
          left -> !left.contains(deadSocket) && left.size() == 1);
      Path liveSocket = single(hubSockets(run));
      // Another server starting on this data directory (a one-shot CLI run is one) leaves the live
      // server's socket alone, and the live server goes on.
      ServerProcess.Result r = ServerProcess.run(dirA, null, "run", "-c", "print(1)");
      assertThat(r.exit()).as(r.stderr()).isZero();
      assertThat(hubSockets(run)).containsExactly(liveSocket);
      JsonNode y = live.call("run_python", Map.of("session_id", "t", "code", "y + 1"), 60);
      assertThat(
              y.path("result").path("structuredContent").path("result").path("text/plain").asText())
          .as(y.toString())
          .isEqualTo("2");
    }
    assertThat(hubSockets(run)).as("a clean stop deletes its own").isEmpty();
    assertThat(list(dirA.resolve("sandbox/workspaces"))).isEmpty();
  }

  private static void assertSucceeded(JsonNode answer) {
    assertThat(answer.path("result").path("structuredContent").path("status").asText())
        .as(answer.toString())
        .isEqualTo("succeeded");
  }

  private static Path single(List<Path> paths) {
    assertThat(paths).hasSize(1);
    return paths.get(0);
  }

  private static List<Path> hubSockets(Path runDir) {
    return list(runDir).stream()
        .filter(p -> p.getFileName().toString().matches("io-[0-9a-f]{8}\\.sock"))
        .toList();
  }

  private static List<Path> list(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.toList();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Loop devices of the host whose backing file is under this data directory. */
  static List<String> loopDevicesOf(Path dataDir) {
    List<String> found = new ArrayList<>();
    try (DirectoryStream<Path> devices = Files.newDirectoryStream(Path.of("/sys/block"), "loop*")) {
      for (Path device : devices) {
        try {
          String backing = Files.readString(device.resolve("loop/backing_file")).strip();
          if (backing.startsWith(dataDir.toString() + "/")) {
            found.add(device.getFileName() + " " + backing);
          }
        } catch (IOException e) {
          // not attached
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return found;
  }

  /**
   * Lines of the mount tables of the launchers of servers of these data directories that name a
   * path under {@code dataDir}.
   */
  static List<String> mountsOfIn(Path dataDir, List<Path> dataDirs) {
    List<String> found = new ArrayList<>();
    for (Path other : dataDirs) {
      for (long pid : ProcessTable.withCommandLineContaining(other + "/run/launcher-")) {
        try {
          for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/mountinfo"))) {
            if (line.contains(dataDir.toString() + "/")) {
              found.add(pid + ": " + line);
            }
          }
        } catch (IOException e) {
          // the launcher is gone
        }
      }
    }
    return found;
  }
}

package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Docker;
import dev.pysandbox.config.DataLayout;
import io.modelcontextprotocol.client.McpSyncClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real time, once per backend: a run past a minute, on bubblewrap and on the container engine, the
 * two at the same time (each only waits; together they take the minute once).
 *
 * <ul>
 *   <li>bubblewrap: a run of 75 s and a session idle for 75 s. Both died at 60 s when the sandbox
 *       launcher was started by a pooled thread (PR_SET_PDEATHSIG follows the thread, and an idle
 *       pooled thread retires after 60 s).
 *   <li>docker: a run of more than a minute with no call to the engine meanwhile (its pooled HTTP
 *       connections sit idle as long), then the session's end: the container is killed and removed
 *       all the same.
 * </ul>
 *
 * Tagged docker, as it needs the engine; the bubblewrap half needs no more than any client test.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Docker
class LongRunIT {
  @TempDir Path bwrapData;
  @TempDir Path dockerData;
  @TempDir Path dockerWork;
  @TempDir Path noWheels;

  @Test
  void aRunPastAMinute_succeeds_onBubblewrapAndOnDocker_andWhatWaitedMeanwhileStillWorks()
      throws Exception {
    CompletableFuture<Void> docker = CompletableFuture.runAsync(this::onDocker);
    try {
      onBubblewrap();
    } finally {
      try {
        docker.get(200, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        throw new AssertionError("the docker half failed", e.getCause());
      }
    }
  }

  /** A run of 75 s, and a session idle for as long that keeps its state. */
  private void onBubblewrap() throws Exception {
    try (RawMcpClient c = new RawMcpClient(bwrapData)) {
      c.initialize();
      JsonNode set = c.call("run_python", Map.of("session_id", "idle", "code", "x = 41"), 60);
      assertThat(set.path("result").path("structuredContent").path("status").asText())
          .isEqualTo("succeeded");
      long started = System.nanoTime();
      JsonNode run =
          c.call(
              "run_python",
              Map.of("code", "import time\ntime.sleep(75)\nprint('slept')", "timeout_seconds", 120),
              150);
      JsonNode result = run.path("result").path("structuredContent");
      assertThat(result.path("status").asText()).as(run.toString()).isEqualTo("succeeded");
      assertThat(result.path("stdout").asText()).isEqualTo("slept\n");
      assertThat(System.nanoTime() - started).isGreaterThan(TimeUnit.SECONDS.toNanos(75));
      JsonNode later = c.call("run_python", Map.of("session_id", "idle", "code", "x + 1"), 60);
      assertThat(
              later
                  .path("result")
                  .path("structuredContent")
                  .path("result")
                  .path("text/plain")
                  .asText())
          .as(later.toString())
          .isEqualTo("42");
    }
  }

  /** A session's run of 65 s with the engine idle, then the session's end removes its container. */
  private void onDocker() {
    List<String> stderr = new CopyOnWriteArrayList<>();
    McpSyncClient client = DockerMcpIT.connect(dockerData, dockerWork, noWheels, stderr);
    try {
      String id = DockerMcpIT.call(client, "create_session", Map.of()).path("session_id").asText();
      long t0 = System.nanoTime();
      JsonNode r =
          DockerMcpIT.call(
              client,
              "run_python",
              Map.of(
                  "session_id",
                  id,
                  "code",
                  "import time\nfor i in range(65):\n    time.sleep(1)\nprint('after', i + 1)",
                  "timeout_seconds",
                  120));
      assertThat(r.path("status").asText()).as(r.toString()).isEqualTo("succeeded");
      assertThat(r.path("stdout").asText()).isEqualTo("after 65\n");
      assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).isGreaterThanOrEqualTo(65);
      String identity = new DataLayout(dockerData).identity();
      int before = DockerMcpIT.containers(identity).size();
      DockerMcpIT.call(client, "close_session", Map.of("session_id", id));
      Await.until(
          "the session's container removed after the engine sat idle",
          Duration.ofSeconds(20),
          () -> DockerMcpIT.containers(identity).size(),
          n -> n < before);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    } finally {
      client.closeGracefully();
    }
  }
}

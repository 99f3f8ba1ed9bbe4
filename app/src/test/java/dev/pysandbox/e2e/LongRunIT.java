package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Client;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real time, once: a run past a minute and a session idle past a minute. Both died at 60 s when the
 * sandbox launcher was started by a pooled thread (PR_SET_PDEATHSIG follows the thread, and an idle
 * pooled thread retires after 60 s).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Client
class LongRunIT {
  @TempDir Path dataDir;

  @Test
  void aRunOf75Seconds_succeeds_andASessionIdleFor75Seconds_keepsItsState() throws Exception {
    try (RawMcpClient c = new RawMcpClient(dataDir)) {
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
}

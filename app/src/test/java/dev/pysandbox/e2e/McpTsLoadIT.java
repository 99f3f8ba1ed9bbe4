package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.NodeScript;
import dev.pysandbox.TestServices;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real server under load from the official MCP TypeScript SDK's client (the one Claude Code
 * uses), over stdio: 64 sessions, 32 calls in flight, 4,000 calls, every answer checked (each call
 * returns its session's own counter, so a lost, doubled or crossed answer is a wrong count), each
 * round against a fresh server. Guards the stdio transport against losing a message or hanging
 * under concurrent calls.
 *
 * <p>One round of 2,000 calls in the suite (its time is the suite's budget: 4,000 took half a
 * minute of a fork, and twice 32 calls in flight on 64 sessions find no more than once); the soak
 * of three rounds of 10,000: {@code -Dpysandbox.loadRounds=3 -Dpysandbox.loadCalls=10000}.
 */
@Client
class McpTsLoadIT {
  static final int SESSIONS = 64;
  static final int IN_FLIGHT = 32;
  static final int CALLS = Integer.getInteger("pysandbox.loadCalls", 2_000);

  /** Per call, and per round: a stuck server fails a round in about half a minute. */
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

  /**
   * A hang guard, not a speed bound (the benchmark measures speed): generous enough for a machine
   * that runs other test forks meanwhile.
   */
  static final Duration ROUND_DEADLINE =
      Duration.ofSeconds(Integer.getInteger("pysandbox.loadDeadlineSeconds", 400));

  static final int ROUNDS = Integer.getInteger("pysandbox.loadRounds", 1);

  @Test
  @Timeout(value = 30, unit = TimeUnit.MINUTES) // the last resort: each round ends by its deadline
  void load_64Sessions32InFlight_thousandsOfCalls_everyAnswerRight(@TempDir Path tmp)
      throws Exception {
    for (int round = 1; round <= ROUNDS; round++) {
      NodeScript.Result r =
          NodeScript.run(
              "load.mjs",
              ROUND_DEADLINE.plusSeconds(20),
              List.of(
                  "--sessions=" + SESSIONS,
                  "--in-flight=" + IN_FLIGHT,
                  "--calls=" + CALLS,
                  "--call-timeout-ms=" + CALL_TIMEOUT.toMillis(),
                  "--deadline-s=" + ROUND_DEADLINE.toSeconds(),
                  "--",
                  TestServices.launcher().toString(),
                  "serve",
                  "--data-dir",
                  tmp.resolve("round-" + round).toString(),
                  "--set",
                  "max_sessions=80"));
      String why = "round " + round + " of " + ROUNDS + ":\n" + r.describe();
      assertThat(r.exit()).as(why).isZero();
      JsonNode report = r.report();
      assertThat(report.path("ok").asInt()).as(why).isEqualTo(CALLS);
      assertThat(report.path("wrong").asInt()).as(why).isZero();
      assertThat(report.path("errors").asInt()).as(why).isZero();
      System.out.println("round " + round + ": " + report);
      // The client closed the server (end of stdin; SIGTERM and SIGKILL if it was slow): its
      // workspaces must not stay mounted on the host.
      Path dataDir = tmp.resolve("round-" + round);
      int finished = round;
      Await.untilChecked(
          "round " + finished + ": no mount point left after the server was closed",
          Duration.ofSeconds(5),
          () -> McpStdioProtocolIT.mountsUnder(dataDir),
          List::isEmpty);
    }
  }
}

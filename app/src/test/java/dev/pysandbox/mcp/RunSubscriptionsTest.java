package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.RunSummary;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.core.DefaultSandboxService;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerTransportProviderBase;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;

/**
 * Subscriptions on the real core: what is kept, for how long, and when it is let go. The transport
 * is the one stub: it records the notifications a client would get.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class RunSubscriptionsTest {
  @TempDir Path dataDir;
  DefaultSandboxService core;
  SandboxService alice;
  final List<String> told = new CopyOnWriteArrayList<>();

  /** Records "session uri" for each resources/updated notification. */
  final McpServerTransportProviderBase transport =
      new McpServerTransportProviderBase() {
        @Override
        public Mono<Void> notifyClients(String method, Object params) {
          return Mono.empty();
        }

        @Override
        public Mono<Void> notifyClient(String sessionId, String method, Object params) {
          return Mono.fromRunnable(
              () -> {
                assertThat(method).isEqualTo(McpSchema.METHOD_NOTIFICATION_RESOURCES_UPDATED);
                told.add(sessionId + " " + ((McpSchema.ResourcesUpdatedNotification) params).uri());
              });
        }

        @Override
        public Mono<Void> closeGracefully() {
          return Mono.empty();
        }
      };

  @BeforeEach
  void start() {
    core = TestServices.start(dataDir, Map.of());
    alice = core.forTenant("alice");
  }

  @AfterEach
  void stop() {
    core.close();
  }

  /** Starts a run of alice's that sleeps; its id once it runs. */
  String startSleeping(double seconds) throws InterruptedException {
    String marker = "# sleeper " + System.nanoTime();
    CompletableFuture.runAsync(
        () ->
            alice.run(
                new ExecutionRequest(
                    marker + "\nimport time\ntime.sleep(" + seconds + ")", null, null, null)));
    return Await.until(
            "the run runs",
            () ->
                alice.listRuns(new RunQuery(10, 0, RunStatus.RUNNING, null)).runs().stream()
                    .filter(r -> r.codePreview().contains(marker))
                    .findFirst(),
            java.util.Optional::isPresent)
        .map(RunSummary::runId)
        .orElseThrow();
  }

  @Test
  void aClientThatSubscribesAndVanishes_leavesNothingOnceTheRunEnds() throws Exception {
    try (RunSubscriptions subs = new RunSubscriptions(transport)) {
      String run = startSleeping(1);
      String uri = ResourceUri.run(run);
      subs.subscribe(alice, "gone", uri);
      assertThat(subs.size()).isEqualTo(1);
      Await.until("told", () -> told, t -> !t.isEmpty());
      assertThat(told).containsExactly("gone " + uri);
      assertThat(alice.getRun(run, false).status()).isEqualTo(RunStatus.SUCCEEDED);
      assertThat(subs.size()).as("forgotten once told, the client never having come back").isZero();
    }
  }

  @Test
  void aClosedSession_dropsItsSubscriptionsAtOnce_othersStay() throws Exception {
    try (RunSubscriptions subs = new RunSubscriptions(transport)) {
      String run = startSleeping(30);
      String uri = ResourceUri.run(run);
      subs.subscribe(alice, "a", uri);
      subs.subscribe(alice, "b", uri);
      subs.subscribe(alice, "b", uri);
      subs.sessionClosed("a");
      assertThat(subs.size()).isEqualTo(1);
      subs.unsubscribe("b", uri);
      assertThat(subs.size()).isZero();
      alice.cancelRun(run);
      Await.until("cancelled", () -> alice.getRun(run, false).status(), RunStatus::isFinal);
      assertThat(told).as("nobody waits any more").isEmpty();
    }
  }

  @Test
  void theBounds_refuseMoreThanASessionOrTheServerMayHold() {
    // a pace of an hour: finished runs stay watched, so the bounds can be reached with them
    try (RunSubscriptions subs = new RunSubscriptions(transport, 3_600_000, 3, 2)) {
      List<String> uris =
          java.util.stream.IntStream.range(0, 4)
              .mapToObj(i -> ResourceUri.run(alice.run(ExecutionRequest.of("1")).runId()))
              .toList();
      subs.subscribe(alice, "a", uris.get(0));
      subs.subscribe(alice, "a", uris.get(1));
      McpError perSession =
          catchThrowableOfType(McpError.class, () -> subs.subscribe(alice, "a", uris.get(2)));
      assertThat(perSession.getJsonRpcError().code()).isEqualTo(RunSubscriptions.TOO_MANY);
      assertThat(perSession.getMessage()).contains("this MCP session already waits for 2 runs");
      subs.subscribe(alice, "b", uris.get(2));
      McpError inAll =
          catchThrowableOfType(McpError.class, () -> subs.subscribe(alice, "b", uris.get(3)));
      assertThat(inAll.getMessage()).contains("the server already watches 3 runs");
      subs.subscribe(alice, "b", uris.get(0));
      assertThat(subs.size()).isEqualTo(3);
    }
  }

  @Test
  void anotherTenantsRun_isRefusedExactlyAsAnUnknownOne() {
    try (RunSubscriptions subs = new RunSubscriptions(transport)) {
      String run = alice.run(ExecutionRequest.of("1")).runId();
      SandboxService bob = core.forTenant("bob");
      McpError foreign =
          catchThrowableOfType(
              McpError.class, () -> subs.subscribe(bob, "b", ResourceUri.run(run)));
      String unknownRun = "run_00000000000000000000";
      McpError unknown =
          catchThrowableOfType(
              McpError.class, () -> subs.subscribe(bob, "b", ResourceUri.run(unknownRun)));
      assertThat(foreign.getJsonRpcError().code())
          .isEqualTo(McpSchema.ErrorCodes.RESOURCE_NOT_FOUND);
      assertThat(foreign.getMessage().replace(run, "<id>"))
          .isEqualTo(unknown.getMessage().replace(unknownRun, "<id>"));
      assertThat(subs.size()).isZero();
    }
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.LimitRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.UploadRequest;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tenants on one core: each sees and changes only what it owns, and another tenant's id answers
 * exactly as an id that does not exist.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Sandboxed
class TenantIsolationTest {
  @TempDir Path dataDir;
  DefaultSandboxService core;
  SandboxService alice;
  SandboxService bob;

  @BeforeEach
  void start() {
    core = TestServices.start(dataDir, Map.of("max_sessions", "6", "max_sessions_per_tenant", "3"));
    alice = core.forTenant("alice");
    bob = core.forTenant("bob");
  }

  @AfterEach
  void stop() {
    core.close();
  }

  @Test
  void theSameSessionIdInTwoTenants_isTwoSessions() {
    alice.run(new ExecutionRequest("x = 'alice'", "default", null, null));
    bob.run(new ExecutionRequest("x = 'bob'", "default", null, null));
    assertThat(alice.run(new ExecutionRequest("x", "default", null, null)).result())
        .containsEntry("text/plain", "'alice'");
    assertThat(bob.run(new ExecutionRequest("x", "default", null, null)).result())
        .containsEntry("text/plain", "'bob'");
    assertThat(alice.listSessions()).extracting(SessionInfo::sessionId).containsExactly("default");
    assertThat(core.listSessions()).as("the tenant local has none").isEmpty();
    bob.closeSession("default");
    assertThat(alice.run(new ExecutionRequest("x", "default", null, null)).result())
        .as("closing bob's default leaves alice's")
        .containsEntry("text/plain", "'alice'");
  }

  @Test
  void anotherTenantsIds_answerAsIdsThatDoNotExist_andChangeNothing() {
    RunRecord run =
        alice.run(
            new ExecutionRequest(
                "open('f.txt','w').write('secret')\n__outputs__['k'] = 1",
                "only-alice",
                null,
                null));
    assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
    String runId = run.runId();
    String missingRun = "run_00000000000000000000";

    assertSameNotFound(s -> s.getRun(runId, true), s -> s.getRun(missingRun, true), runId);
    assertSameNotFound(s -> s.getRunOutputs(runId), s -> s.getRunOutputs(missingRun), runId);
    assertSameNotFound(s -> s.cancelRun(runId), s -> s.cancelRun(missingRun), runId);
    assertSameNotFound(
        s -> s.listArtifacts(runId, null), s -> s.listArtifacts(missingRun, null), runId);
    assertSameNotFound(
        s -> s.readArtifact(runId, null, "f.txt", 1000),
        s -> s.readArtifact(missingRun, null, "f.txt", 1000),
        runId);
    assertSameNotFound(
        s -> s.listArtifacts(null, "only-alice"), s -> s.listArtifacts(null, "nobody"), null);
    assertSameNotFound(
        s -> s.readArtifact(null, "only-alice", "f.txt", 1000),
        s -> s.readArtifact(null, "nobody", "f.txt", 1000),
        null);
    assertSameNotFound(
        s -> s.openArtifact(runId, null, "f.txt"),
        s -> s.openArtifact(missingRun, null, "f.txt"),
        runId);
    assertSameNotFound(
        s -> s.openArtifact(null, "only-alice", "f.txt"),
        s -> s.openArtifact(null, "nobody", "f.txt"),
        null);
    assertSameNotFound(
        s -> s.getContext("only-alice", null), s -> s.getContext("nobody", null), null);
    assertSameNotFound(
        s -> s.setContext("only-alice", Map.of("x", 1)),
        s -> s.setContext("nobody", Map.of("x", 1)),
        null);
    assertSameNotFound(s -> s.clearContext("only-alice"), s -> s.clearContext("nobody"), null);
    assertSameNotFound(s -> s.closeSession("only-alice"), s -> s.closeSession("nobody"), null);

    assertThat(bob.listRuns(new RunQuery(100, 0, null, null)).runs()).isEmpty();
    assertThat(bob.listRuns(new RunQuery(100, 0, null, "only-alice")).total()).isZero();
    assertThat(bob.listSessions()).isEmpty();
    assertThat(bob.listRecordedSessions()).isEmpty();

    // bob writing to "only-alice" makes a session of his own
    bob.uploadFile(new UploadRequest("only-alice", "f.txt", "bob's", null, true));
    assertThat(text(bob.readArtifact(null, "only-alice", "f.txt", 1000))).isEqualTo("bob's");

    // alice's things are as they were
    assertThat(alice.getRun(runId, false).status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(alice.getRunOutputs(runId).outputs()).containsEntry("k", 1);
    assertThat(text(alice.readArtifact(null, "only-alice", "f.txt", 1000))).isEqualTo("secret");
    assertThat(alice.listRuns(new RunQuery(100, 0, null, null)).runs())
        .extracting(r -> r.runId())
        .containsExactly(runId);
  }

  @Test
  void aRunningRunOfAnotherTenant_cannotBeCancelled() throws Exception {
    var running =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> alice.run(new ExecutionRequest("import time; time.sleep(3)", null, null, null)));
    String id =
        Await.until(
                "alice's run is running",
                () -> alice.listRuns(new RunQuery(1, 0, RunStatus.RUNNING, null)).runs(),
                runs -> !runs.isEmpty())
            .get(0)
            .runId();
    assertThatThrownBy(() -> bob.cancelRun(id))
        .isInstanceOfSatisfying(
            PysandboxException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
    assertThat(running.get(20, TimeUnit.SECONDS).status()).isEqualTo(RunStatus.SUCCEEDED);
  }

  @Test
  void eachTenantHasItsOwnSessionCap_withinTheServersCap() {
    for (int i = 0; i < 3; i++) {
      alice.createSession("a" + i, null, LimitRequest.DEFAULTS);
    }
    assertThatThrownBy(() -> alice.createSession("a3", null, LimitRequest.DEFAULTS))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.MAX_SESSIONS);
              assertThat(e.getMessage()).contains("max_sessions_per_tenant");
            });
    bob.createSession("b0", null, LimitRequest.DEFAULTS);
    assertThat(bob.listSessions()).hasSize(1);
  }

  @Test
  void aTenantNameOutsideTheRule_isRefused() {
    for (String bad : List.of("", "Alice", "../x", "a b", "x".repeat(64), "-a")) {
      assertThatThrownBy(() -> core.forTenant(bad))
          .as(bad)
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }
  }

  /**
   * Bob calling with alice's id fails exactly as bob calling with an id nobody has (the id in the
   * message aside).
   */
  private void assertSameNotFound(
      Function<SandboxService, Object> withAlicesId,
      Function<SandboxService, Object> withMissingId,
      String alicesRunId) {
    PysandboxException theirs = failure(() -> withAlicesId.apply(bob));
    PysandboxException none = failure(() -> withMissingId.apply(bob));
    assertThat(theirs.code()).isEqualTo(ErrorCode.NOT_FOUND);
    assertThat(none.code()).isEqualTo(ErrorCode.NOT_FOUND);
    String normalised =
        (alicesRunId == null ? theirs.getMessage() : theirs.getMessage().replace(alicesRunId, "ID"))
            .replace("only-alice", "ID");
    String expected =
        none.getMessage().replace("run_00000000000000000000", "ID").replace("nobody", "ID");
    assertThat(normalised).isEqualTo(expected);
  }

  private static String text(dev.pysandbox.api.ArtifactContent c) {
    return c.content() != null
        ? c.content()
        : new String(java.util.Base64.getDecoder().decode(c.contentBase64()));
  }

  private static PysandboxException failure(Runnable call) {
    try {
      call.run();
    } catch (PysandboxException e) {
      return e;
    }
    throw new AssertionError("the call succeeded");
  }
}

package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.ManualTime;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Approval;
import dev.pysandbox.api.ApprovalDecision;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.app.Assembly;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs held for approval, on a real core with real sandboxes ({@code approval_policy=always}, so
 * that every run waits whatever its analysis says): nothing runs before a decision, a decision is
 * used once, a late one is refused, an expired run never runs, the prompt's answer (as MCP
 * elicitation gives it) runs it on the caller's thread, and the operator's decision from another
 * process is carried out by the server holding the run.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class ApprovalsTest {
  @TempDir Path dataDir;
  ManualTime clock = ManualTime.wallOnly(Instant.now());
  DefaultSandboxService service;

  @BeforeEach
  void start() {
    service =
        Assembly.create(
            TestServices.config(dataDir, Map.of("approval_policy", "always", "approval_ttl", "60")),
            clock);
    service.startBackground();
    service.awaitStarted();
  }

  @AfterEach
  void stop() {
    service.close();
  }

  private RunRecord held(String session, String code) {
    RunRecord r = service.run(new ExecutionRequest(code, session, "held", 30));
    assertThat(r.status()).isEqualTo(RunStatus.AWAITING_APPROVAL);
    assertThat(r.approvalId()).matches("apr_[0-9a-f]{16}");
    assertThat(r.stdout()).isNull();
    return r;
  }

  private static ErrorCode codeOf(Throwable t) {
    return ((PysandboxException) t).code();
  }

  @Test
  void aHeldRunDoesNothingUntilApproved_thenRunsOnce_andItsApprovalIsUsedOnce() {
    RunRecord r = held(null, "open('proof.txt', 'w').write('ran')\nprint('ran')");
    assertThat(service.listPendingApprovals().approvals())
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.runId()).isEqualTo(r.runId());
              assertThat(a.why()).contains("always");
            });
    Approval shown = service.getApproval(r.approvalId());
    assertThat(shown.code()).contains("proof.txt");
    assertThat(service.getRun(r.runId(), false, 1).status())
        .as("waiting changes nothing")
        .isEqualTo(RunStatus.AWAITING_APPROVAL);

    RunRecord decided = service.decideApproval(r.approvalId(), true, "key:key_x", "rest", "ok");
    assertThat(decided.runId()).isEqualTo(r.runId());
    RunRecord done = service.getRun(r.runId(), false, 30);
    assertThat(done.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(done.stdout()).isEqualTo("ran\n");
    assertThat(done.approvalId()).isEqualTo(r.approvalId());
    assertThat(done.artifacts()).extracting(a -> a.path()).contains("proof.txt");
    assertThat(service.listPendingApprovals().approvals()).isEmpty();
    assertThat(
            service
                .listSecurityEvents(
                    new dev.pysandbox.api.SecurityEventQuery(null, null, null, 100, null))
                .events()
                .stream()
                .filter(e -> r.runId().equals(e.runId()))
                .map(e -> e.kind()))
        .containsExactlyInAnyOrder("approval_approved", "approval_requested");

    assertThatThrownBy(() -> service.decideApproval(r.approvalId(), true, "key:y", "rest", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("already approved by key:key_x");
    assertThatThrownBy(() -> service.decideApproval(r.approvalId(), false, "key:y", "rest", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThat(service.getApproval(r.approvalId()))
        .satisfies(
            a -> {
              assertThat(a.state()).isEqualTo("approved");
              assertThat(a.decidedBy()).isEqualTo("key:key_x");
              assertThat(a.decidedVia()).isEqualTo("rest");
              assertThat(a.decisionReason()).isEqualTo("ok");
              assertThat(a.decidedAt()).isNotNull();
            });
  }

  @Test
  void aDeniedRunNeverRuns_andUnknownOrForeignApprovalsAreNotFound() {
    RunRecord r = held(null, "print('must not run')");
    RunRecord denied =
        service.decideApproval(r.approvalId(), false, "key:k", "rest", "looks risky");
    assertThat(denied.status()).isEqualTo(RunStatus.DENIED);
    assertThat(denied.message()).contains("denied by key:k").contains("looks risky");
    assertThat(service.getRun(r.runId(), false, 2).stdout()).isNull();
    assertThat(
            service
                .listSecurityEvents(
                    new dev.pysandbox.api.SecurityEventQuery(
                        null, dev.pysandbox.api.SecurityEvent.Kind.APPROVAL_DENIED, null, 10, null))
                .events())
        .extracting(e -> e.detail().get("reason"))
        .containsExactly("looks risky");

    RunRecord other = held(null, "print(2)");
    assertThatThrownBy(
            () ->
                service
                    .forTenant("other")
                    .decideApproval(other.approvalId(), true, "key:o", "rest", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND));
    assertThat(service.forTenant("other").listPendingApprovals().approvals()).isEmpty();
    assertThatThrownBy(
            () -> service.decideApproval("apr_0000000000000000", true, "key:k", "rest", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND));
    assertThatThrownBy(() -> service.decideApproval("../x", true, "key:k", "rest", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void anApprovalNotDecidedInTime_expires_itsRunNeverRuns_andALateApprovalIsRefused() {
    RunRecord r = held(null, "print('too late')");
    clock.advance(Duration.ofMinutes(61));
    service.core().approvedRuns.tick();
    RunRecord expired = service.getRun(r.runId(), false);
    assertThat(expired.status()).isEqualTo(RunStatus.EXPIRED);
    assertThat(expired.stdout()).isNull();
    assertThatThrownBy(() -> service.decideApproval(r.approvalId(), true, "key:k", "rest", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.APPROVAL_EXPIRED));
    assertThat(
            service
                .listSecurityEvents(
                    new dev.pysandbox.api.SecurityEventQuery(
                        null,
                        dev.pysandbox.api.SecurityEvent.Kind.APPROVAL_EXPIRED,
                        null,
                        10,
                        null))
                .events())
        .extracting(e -> e.runId())
        .containsExactly(r.runId());

    RunRecord second = held(null, "print('also late')");
    clock.advance(Duration.ofMinutes(61));
    // No tick yet: the decision itself notices the time ran out.
    assertThatThrownBy(
            () -> service.decideApproval(second.approvalId(), true, "key:k", "rest", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.APPROVAL_EXPIRED));
    assertThat(service.getRun(second.runId(), false).status()).isEqualTo(RunStatus.EXPIRED);
  }

  @Test
  void thePromptsAnswer_runsTheRunOnTheCallersThread_andADeclineDeniesIt() {
    AtomicReference<Approval> asked = new AtomicReference<>();
    RunListener yes =
        new RunListener() {
          @Override
          public void started(String runId) {}

          @Override
          public ApprovalDecision askApproval(Approval approval) {
            asked.set(approval);
            return new ApprovalDecision(true, "elicitation:test-client", null);
          }
        };
    RunRecord r = service.run(new ExecutionRequest("print(6 * 7)", null, null, 30), yes);
    assertThat(r.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).isEqualTo("42\n");
    assertThat(asked.get().code()).isEqualTo("print(6 * 7)");
    assertThat(service.getApproval(r.approvalId()).decidedVia()).isEqualTo("elicitation");

    RunListener no =
        new RunListener() {
          @Override
          public void started(String runId) {}

          @Override
          public ApprovalDecision askApproval(Approval approval) {
            return new ApprovalDecision(
                false, "elicitation:test-client", "cancelled at the prompt");
          }
        };
    RunRecord d = service.run(new ExecutionRequest("print('no')", null, null, 30), no);
    assertThat(d.status()).isEqualTo(RunStatus.DENIED);
    assertThat(d.stdout()).isNull();
  }

  @Test
  void aSessionRun_approvedByTheOperatorInAnotherProcess_runsInItsSessionOnTheHoldingServer()
      throws Exception {
    service.createSession("sess-a", null);
    service.setContext("sess-a", Map.of("x", 41));
    RunRecord r = held("sess-a", "print(x + 1)");
    try (DefaultSandboxService cli =
        Assembly.openReadOnly(TestServices.config(dataDir, Map.of()))) {
      assertThat(cli.allPendingApprovals().approvals())
          .extracting(Approval::approvalId)
          .contains(r.approvalId());
      RunRecord after = cli.decideAsOperator(r.approvalId(), true, "reviewed");
      assertThat(after.status()).isEqualTo(RunStatus.AWAITING_APPROVAL);
      assertThat(cli.anyApproval(r.approvalId()).decidedBy()).startsWith("cli:");
    }
    RunRecord done = service.getRun(r.runId(), false, 30);
    assertThat(done.status()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(done.stdout()).isEqualTo("42\n");
    assertThat(done.sessionId()).isEqualTo("sess-a");
  }

  @Test
  void aHeldRun_cannotBeDeleted_untilItIsDecided() {
    RunRecord r = held(null, "print(1)");
    assertThatThrownBy(() -> service.deleteRun(r.runId(), true))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("awaits approval " + r.approvalId());
    service.decideApproval(r.approvalId(), false, "key:k", "rest", null);
    assertThat(service.deleteRun(r.runId(), true).deleted()).isTrue();
  }

  @Test
  void aStartedRunThatMustWait_answersAtOnceWithTheHeldRun() {
    RunRecord r = service.start(new ExecutionRequest("print(1)", null, null, 30), RunListener.NONE);
    assertThat(r.status()).isEqualTo(RunStatus.AWAITING_APPROVAL);
    assertThat(r.approvalId()).isNotNull();
  }

  @Test
  void aHeldRun_saysWhoDecidesHowAndHowToWaitForIt_asAnsweredAndAsRecorded() {
    RunRecord r = held(null, "print(1)");

    for (RunRecord seen : java.util.List.of(r, service.getRun(r.runId(), false))) {
      assertThat(seen.runId()).isEqualTo(r.runId());
      assertThat(seen.message())
          .as("the message of %s", seen.runId())
          .isNotNull()
          .contains("approval " + r.approvalId())
          .contains("the server's approval_policy is always")
          .contains("pysandbox approvals approve " + r.approvalId())
          .contains("POST /api/v1/approvals/" + r.approvalId() + "/approve")
          .contains("approver")
          .contains("prompt")
          .contains("get_run")
          .contains("wait_seconds")
          .contains("expires");
    }
  }
}

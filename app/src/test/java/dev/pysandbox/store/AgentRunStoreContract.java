package dev.pysandbox.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.agent.AgentBudgets;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunList;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.api.agent.AgentStepKind;
import dev.pysandbox.api.agent.AgentUsage;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link RunStore}'s {@link AgentRunStore} must do (issue 26): agent runs and their
 * steps round trip, a finished agent run never changes, tenants are apart, listings page without
 * gaps or duplicates, and a stopped or dead server's agent runs are interrupted. Each
 * implementation's test extends this.
 */
public abstract class AgentRunStoreContract {
  /** The time the store stamps interrupted agent runs with. */
  protected static final Instant NOW = Instant.ofEpochMilli(50_000);

  protected RunStore store;
  protected AgentRunStore agentRuns;

  /**
   * Opens a store on {@code clock}. Every call in one test returns a new store over the same data,
   * as another server process sharing the data directory would see it.
   */
  protected abstract RunStore newStore(Clock clock) throws Exception;

  @BeforeEach
  void open() throws Exception {
    store = newStore(Clock.fixed(NOW, ZoneOffset.UTC));
    agentRuns = store.agentRuns();
  }

  @AfterEach
  void close() {
    store.close();
  }

  /** A running agent run of {@code tenant} created at {@code createdMillis}, with no steps. */
  public static AgentRunInfo running(String id, String tenant, long createdMillis) {
    return new AgentRunInfo(
        id,
        tenant,
        AgentRunStatus.RUNNING,
        "analyse " + id,
        "openai",
        "gpt-test",
        "s_" + id,
        true,
        null,
        null,
        null,
        null,
        null,
        List.of(),
        AgentUsage.NONE,
        new AgentBudgets(10, 5_000, 120, 6, 2),
        List.of(),
        Instant.ofEpochMilli(createdMillis).toString(),
        null);
  }

  static AgentStep modelStep(int index, String text) {
    return new AgentStep(
        index,
        AgentStepKind.MODEL,
        text,
        null,
        null,
        null,
        null,
        "run_python",
        "the prompt " + index,
        120,
        40,
        false,
        900,
        Instant.ofEpochMilli(2_000 + index).toString(),
        null);
  }

  static AgentStep codeStep(int index, String runStatus, String output) {
    return new AgentStep(
        index,
        AgentStepKind.CODE,
        "observation " + index,
        "print(6*7)",
        "run_" + index,
        runStatus,
        output,
        null,
        null,
        null,
        null,
        null,
        35,
        Instant.ofEpochMilli(3_000 + index).toString(),
        null);
  }

  /** What reading {@code run} back gives: the budgets' use computed from its usage. */
  static AgentRunInfo asRead(AgentRunInfo run) {
    return run.withState(
        run.status(),
        run.answer(),
        run.stopReason(),
        run.errorCode(),
        run.retryable(),
        run.approvalId(),
        run.usage(),
        run.budgets().use(run.usage(), 0),
        run.endedAt());
  }

  static AgentRunInfo succeeded(AgentRunInfo run, String answer) {
    return run.withState(
        AgentRunStatus.SUCCEEDED,
        answer,
        "the model answered",
        null,
        null,
        null,
        new AgentUsage(300, 120, 420, true, 2, 1, 4.5),
        List.of(),
        Instant.ofEpochMilli(9_000).toString());
  }

  @Test
  void insert_thenGet_returnsEveryFieldAndTheStepsInIndexOrder() {
    AgentRunInfo run =
        running("agr_1", "t1", 1_000)
            .withSteps(List.of(modelStep(0, "let me compute"), codeStep(1, "running", null)));
    agentRuns.insert(run, "aaaaaaaa");
    assertThat(agentRuns.putStep("agr_1", modelStep(3, "the answer is 42"))).isTrue();
    assertThat(agentRuns.putStep("agr_1", codeStep(2, "succeeded", "42\n"))).isTrue();

    AgentRunInfo read = agentRuns.get("t1", "agr_1").orElseThrow();

    assertThat(read.withoutSteps()).isEqualTo(asRead(run).withoutSteps());
    assertThat(read.steps())
        .containsExactly(
            modelStep(0, "let me compute"),
            codeStep(1, "running", null),
            codeStep(2, "succeeded", "42\n"),
            modelStep(3, "the answer is 42"));
    assertThat(read.budgetUse())
        .extracting(b -> b.name() + "=" + b.limit() + "/" + b.used())
        .containsExactly(
            "max_iterations=10/0",
            "token_budget=5000/0",
            "time_budget_seconds=120/0",
            "max_subcalls=6/0",
            "max_depth=2/0");
  }

  @Test
  void update_writesTheState_andTheBudgetsUseFollowsTheUsage() {
    agentRuns.insert(running("agr_u", "t1", 1_000), "aaaaaaaa");
    AgentRunInfo waiting =
        running("agr_u", "t1", 1_000)
            .withModel("gpt-test-2024")
            .withState(
                AgentRunStatus.AWAITING_APPROVAL,
                null,
                "waiting for approval apr_1",
                null,
                null,
                "apr_1",
                new AgentUsage(100, 50, 150, false, 1, 0, 1.25),
                List.of(),
                null);
    assertThat(agentRuns.update(waiting)).isTrue();

    AgentRunInfo read = agentRuns.get("t1", "agr_u").orElseThrow();

    assertThat(read).isEqualTo(asRead(waiting));
    assertThat(read.budgetUse().get(1).left()).isEqualTo(4_850);
  }

  @Test
  void putStep_withAnIndexAlreadyKept_replacesThatStep() {
    agentRuns.insert(running("agr_r", "t1", 1_000), "aaaaaaaa");
    assertThat(agentRuns.putStep("agr_r", codeStep(0, "running", null))).isTrue();
    assertThat(agentRuns.putStep("agr_r", codeStep(0, "failed", "ZeroDivisionError"))).isTrue();

    assertThat(agentRuns.get("t1", "agr_r").orElseThrow().steps())
        .containsExactly(codeStep(0, "failed", "ZeroDivisionError"));
  }

  @Test
  void aFinishedAgentRun_neverChanges_norTakesSteps() {
    AgentRunInfo run = running("agr_f", "t1", 1_000).withSteps(List.of(modelStep(0, "hi")));
    agentRuns.insert(run, "aaaaaaaa");
    AgentRunInfo done = succeeded(run, "42");
    assertThat(agentRuns.update(done)).isTrue();

    AgentRunInfo late =
        run.withState(
            AgentRunStatus.FAILED,
            null,
            "a late model answer",
            "provider_error",
            true,
            null,
            new AgentUsage(1, 1, 2, false, 9, 9, 99),
            List.of(),
            Instant.ofEpochMilli(9_999).toString());
    assertThat(agentRuns.update(late)).as("update after a final status").isFalse();
    assertThat(agentRuns.update(running("agr_f", "t1", 1_000))).as("back to running").isFalse();
    assertThat(agentRuns.putStep("agr_f", modelStep(0, "replaced"))).isFalse();
    assertThat(agentRuns.putStep("agr_f", modelStep(1, "added"))).isFalse();
    assertThat(agentRuns.interruptAll("aaaaaaaa", "stopping")).isEmpty();

    assertThat(agentRuns.get("t1", "agr_f").orElseThrow()).isEqualTo(asRead(done));
  }

  @Test
  void anUnknownAgentRun_takesNoUpdateAndNoStep() {
    assertThat(agentRuns.update(running("agr_none", "t1", 1_000))).isFalse();
    assertThat(agentRuns.putStep("agr_none", modelStep(0, "x"))).isFalse();
    assertThat(agentRuns.get("t1", "agr_none")).isEmpty();
  }

  @Test
  void anotherTenantsAgentRun_isAbsent_fromGetAndList() {
    agentRuns.insert(running("agr_a", "alice", 1_000), "aaaaaaaa");
    agentRuns.insert(running("agr_b", "bob", 2_000), "aaaaaaaa");

    assertThat(agentRuns.get("bob", "agr_a")).isEmpty();
    assertThat(agentRuns.get("alice", "agr_a")).isPresent();
    assertThat(ids(agentRuns.list("alice", 10, null, null))).containsExactly("agr_a");
    assertThat(ids(agentRuns.list("bob", 10, null, null))).containsExactly("agr_b");
    assertThat(ids(agentRuns.list("carol", 10, null, null))).isEmpty();
  }

  @Test
  void list_pagesNewestFirst_withoutStepsGapsOrDuplicates_whenCreationTimesAreEqual() {
    // Three at one millisecond, two at another: the id orders those within one time.
    long[] created = {1_000, 3_000, 3_000, 2_000, 3_000, 2_000, 500};
    for (int i = 0; i < created.length; i++) {
      agentRuns.insert(
          running("agr_" + i, "t1", created[i]).withSteps(List.of(modelStep(0, "x"))), "aaaaaaaa");
    }
    List<String> expected = List.of("agr_4", "agr_2", "agr_1", "agr_5", "agr_3", "agr_0", "agr_6");

    List<String> seen = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      AgentRunList page = agentRuns.list("t1", 2, cursor, null);
      assertThat(page.agentRuns()).hasSizeLessThanOrEqualTo(2).allMatch(r -> r.steps().isEmpty());
      seen.addAll(ids(page));
      cursor = page.nextCursor();
      pages++;
    } while (cursor != null && pages < 10);

    assertThat(seen).containsExactlyElementsOf(expected);
    assertThat(pages).isEqualTo(4);
    assertThat(agentRuns.list("t1", 7, null, null).nextCursor()).as("all on one page").isNull();
  }

  @Test
  void list_keepsItsPlace_whenAgentRunsStartWhileAClientPages() {
    agentRuns.insert(running("agr_1", "t1", 1_000), "aaaaaaaa");
    agentRuns.insert(running("agr_2", "t1", 2_000), "aaaaaaaa");
    AgentRunList first = agentRuns.list("t1", 1, null, null);
    agentRuns.insert(running("agr_3", "t1", 3_000), "aaaaaaaa");

    assertThat(ids(agentRuns.list("t1", 1, first.nextCursor(), null))).containsExactly("agr_1");
  }

  @Test
  void list_withAStatus_showsOnlyThose_andPagesWithinThem() {
    for (int i = 0; i < 5; i++) {
      agentRuns.insert(running("agr_" + i, "t1", 1_000 + i), "aaaaaaaa");
    }
    agentRuns.update(succeeded(running("agr_1", "t1", 1_001), "a"));
    agentRuns.update(succeeded(running("agr_3", "t1", 1_003), "b"));
    agentRuns.update(succeeded(running("agr_4", "t1", 1_004), "c"));

    AgentRunList first = agentRuns.list("t1", 2, null, AgentRunStatus.SUCCEEDED);
    assertThat(ids(first)).containsExactly("agr_4", "agr_3");
    AgentRunList second = agentRuns.list("t1", 2, first.nextCursor(), AgentRunStatus.SUCCEEDED);
    assertThat(ids(second)).containsExactly("agr_1");
    assertThat(second.nextCursor()).isNull();
    assertThat(ids(agentRuns.list("t1", 10, null, AgentRunStatus.RUNNING)))
        .containsExactly("agr_2", "agr_0");
    assertThat(ids(agentRuns.list("t1", 10, null, AgentRunStatus.CANCELLED))).isEmpty();
  }

  @Test
  void list_refusesALimitOutOfRange_andACursorNoPageGave() {
    for (int limit : new int[] {0, -1, 1001}) {
      assertThatThrownBy(() -> agentRuns.list("t1", limit, null, null))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("1 to 1000");
    }
    assertThat(agentRuns.list("t1", 1000, null, null).agentRuns()).isEmpty();
    for (String cursor : new String[] {"garbage", "12|", "|agr_1", "x|agr_1"}) {
      assertThatThrownBy(() -> agentRuns.list("t1", 10, cursor, null))
          .isInstanceOfSatisfying(
              PysandboxException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("next_cursor");
    }
  }

  @Test
  void interruptAll_marksThatServersUnfinishedAgentRuns_only() {
    agentRuns.insert(running("agr_mine", "t1", 1_000), "aaaaaaaa");
    agentRuns.insert(running("agr_waiting", "t1", 1_001), "aaaaaaaa");
    agentRuns.update(
        running("agr_waiting", "t1", 1_001)
            .withState(
                AgentRunStatus.AWAITING_APPROVAL,
                null,
                "waiting",
                null,
                null,
                "apr_1",
                AgentUsage.NONE,
                List.of(),
                null));
    agentRuns.insert(running("agr_done", "t1", 1_002), "aaaaaaaa");
    agentRuns.update(succeeded(running("agr_done", "t1", 1_002), "42"));
    agentRuns.insert(running("agr_other", "t1", 1_003), "bbbbbbbb");

    assertThat(agentRuns.interruptAll("aaaaaaaa", "the server stopped"))
        .containsExactlyInAnyOrder("agr_mine", "agr_waiting");

    AgentRunInfo mine = agentRuns.get("t1", "agr_mine").orElseThrow();
    assertThat(mine.status()).isEqualTo(AgentRunStatus.INTERRUPTED);
    assertThat(mine.stopReason()).isEqualTo("the server stopped");
    assertThat(mine.endedAt()).isEqualTo(NOW.toString());
    assertThat(agentRuns.get("t1", "agr_waiting").orElseThrow().status())
        .isEqualTo(AgentRunStatus.INTERRUPTED);
    assertThat(agentRuns.get("t1", "agr_done").orElseThrow().status())
        .isEqualTo(AgentRunStatus.SUCCEEDED);
    assertThat(agentRuns.get("t1", "agr_other").orElseThrow().status())
        .isEqualTo(AgentRunStatus.RUNNING);
    assertThat(agentRuns.interruptAll("aaaaaaaa", "again")).as("already interrupted").isEmpty();
    assertThat(agentRuns.putStep("agr_mine", modelStep(0, "late"))).isFalse();
  }

  @Test
  void interruptOrphans_marksTheUnfinishedAgentRunsOfDeadServers_only() {
    agentRuns.insert(running("agr_alive", "t1", 1_000), "aaaaaaaa");
    agentRuns.insert(running("agr_dead", "t2", 1_001), "dddddddd");
    agentRuns.insert(running("agr_dead_done", "t1", 1_002), "dddddddd");
    agentRuns.update(succeeded(running("agr_dead_done", "t1", 1_002), "42"));

    assertThat(agentRuns.interruptOrphans(Set.of("aaaaaaaa")::contains, "its server died"))
        .containsExactly("agr_dead");

    AgentRunInfo dead = agentRuns.get("t2", "agr_dead").orElseThrow();
    assertThat(dead.status()).isEqualTo(AgentRunStatus.INTERRUPTED);
    assertThat(dead.stopReason()).isEqualTo("its server died");
    assertThat(dead.endedAt()).isEqualTo(NOW.toString());
    assertThat(agentRuns.get("t1", "agr_alive").orElseThrow().status())
        .isEqualTo(AgentRunStatus.RUNNING);
    assertThat(agentRuns.get("t1", "agr_dead_done").orElseThrow().status())
        .isEqualTo(AgentRunStatus.SUCCEEDED);
  }

  @Test
  void anotherStoreOverTheSameData_seesTheAgentRuns_andCannotChangeAFinishedOne() throws Exception {
    agentRuns.insert(running("agr_s", "t1", 1_000), "aaaaaaaa");
    try (RunStore other = newStore(Clock.fixed(NOW, ZoneOffset.UTC))) {
      assertThat(other.agentRuns().update(succeeded(running("agr_s", "t1", 1_000), "42"))).isTrue();
    }
    assertThat(agentRuns.putStep("agr_s", modelStep(0, "late"))).isFalse();
    assertThat(agentRuns.get("t1", "agr_s").orElseThrow().answer()).isEqualTo("42");
  }

  static List<String> ids(AgentRunList page) {
    return page.agentRuns().stream().map(AgentRunInfo::agentRunId).toList();
  }
}

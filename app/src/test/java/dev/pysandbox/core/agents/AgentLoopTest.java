package dev.pysandbox.core.agents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SecurityEventQuery;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunRequest;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.api.agent.AgentStepKind;
import dev.pysandbox.api.agent.ChatMessage;
import dev.pysandbox.api.agent.ModelReply;
import dev.pysandbox.api.agent.ToolCall;
import dev.pysandbox.core.DefaultSandboxService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agent runs on a real core with real sandboxes, the model scripted in the JVM (the caller's model,
 * as MCP sampling lends it): the loop, budgets, cancels, refused tools, tenants, a server's stop.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class AgentLoopTest {
  @TempDir Path dataDir;
  DefaultSandboxService service;

  @BeforeEach
  void start() {
    service = TestServices.start(dataDir, Map.of());
  }

  @AfterEach
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  private static AgentRunRequest task(String task) {
    return AgentRunRequest.of(task);
  }

  private static AgentRunRequest budgets(
      String task, Integer iterations, Long tokens, Integer seconds) {
    return new AgentRunRequest(
        task, null, null, iterations, null, null, tokens, seconds, null, List.of(), 0);
  }

  private AgentRunInfo finished(String id) throws Exception {
    return Await.until(
        "agent run " + id + " ends",
        Duration.ofSeconds(60),
        () -> service.agents().status(id, 5),
        r -> r.status().finished());
  }

  @Test
  void codeThenAnswerGivesTheModelTheRealOutputAndKeepsEverything() throws Exception {
    ScriptedModel model =
        new ScriptedModel(false)
            .thenText("Let me compute.\n```python\nx = 6 * 7\nprint('value', x)\n```")
            .thenText("The answer is 42.");
    AgentRunInfo started = service.agents().start(task("what is 6*7?"), model);
    assertThat(started.agentRunId()).matches("agr_[0-9a-f]{16}");
    AgentRunInfo r = finished(started.agentRunId());

    assertThat(r.status()).isEqualTo(AgentRunStatus.SUCCEEDED);
    assertThat(r.answer()).isEqualTo("The answer is 42.");
    assertThat(r.steps())
        .extracting(AgentStep::kind)
        .containsExactly(AgentStepKind.MODEL, AgentStepKind.CODE, AgentStepKind.MODEL);
    AgentStep code = r.steps().get(1);
    assertThat(code.runId()).startsWith("run_");
    assertThat(code.runStatus()).isEqualTo("succeeded");
    assertThat(code.output()).contains("value 42");
    List<ChatMessage> second = model.requests.get(1).messages();
    assertThat(second.get(second.size() - 1).text()).contains("value 42");
    assertThat(r.usage().iterations()).isEqualTo(2);
    assertThat(r.usage().totalTokens()).isEqualTo(240);
    assertThat(r.usage().tokensEstimated()).isFalse();
    assertThat(r.ownSession()).isTrue();

    // the code run is an ordinary run of the agent's session, and the variable stays there
    RunRecord run = service.getRun(code.runId(), true);
    assertThat(run.sessionId()).isEqualTo(r.sessionId());
    assertThat(run.description()).contains(r.agentRunId());
    assertThat(service.run(new ExecutionRequest("print(x)", r.sessionId(), null, 30)).stdout())
        .isEqualTo("42\n");

    // kept: the store has it with its steps, and the notebook has the run's real output
    AgentRunInfo stored = service.agents().status(r.agentRunId(), 0);
    assertThat(stored.steps()).hasSize(3);
    Path nb = dataDir.resolve("agent-runs").resolve(r.agentRunId()).resolve("notebook.ipynb");
    String notebook =
        Await.until("the notebook", () -> Files.exists(nb) ? read(nb) : "", t -> !t.isEmpty());
    assertThat(notebook).contains("value 42").contains("The answer is 42.").contains("x = 6 * 7");
    assertThat(service.agents().list(10, null, null).agentRuns())
        .extracting(AgentRunInfo::agentRunId)
        .contains(r.agentRunId());
  }

  @Test
  void toolCallsRunPythonAndAnUnknownToolIsToldOnceThenFails() throws Exception {
    ScriptedModel model =
        new ScriptedModel(true)
            .then(r -> call("run_python", "{\"code\": \"print(1 + 1)\"}"))
            .then(r -> call("shell", "{\"cmd\": \"ls\"}"))
            .then(r -> call("shell", "{\"cmd\": \"ls\"}"));
    AgentRunInfo r = finished(service.agents().start(task("add"), model).agentRunId());

    assertThat(r.status()).isEqualTo(AgentRunStatus.FAILED);
    assertThat(r.stopReason()).contains("again");
    assertThat(model.requests).hasSize(3);
    List<ChatMessage> second = model.requests.get(1).messages();
    assertThat(second.get(second.size() - 1).role()).isEqualTo(ChatMessage.Role.TOOL);
    assertThat(second.get(second.size() - 1).text()).contains("2");
    List<ChatMessage> third = model.requests.get(2).messages();
    assertThat(third.get(third.size() - 1).text()).contains("there is no tool 'shell'");
    assertThat(
            service
                .listSecurityEvents(
                    new SecurityEventQuery(
                        null,
                        dev.pysandbox.api.SecurityEvent.Kind.AGENT_TOOL_REFUSED,
                        null,
                        10,
                        null))
                .events())
        .isNotEmpty();
  }

  @Test
  void aModelThatNeverStopsEndsAtItsIterations() throws Exception {
    ScriptedModel model = new ScriptedModel(false);
    model.fallback = r -> ScriptedModel.text("```python\nprint('again')\n```");
    AgentRunInfo r =
        finished(service.agents().start(budgets("loop", 3, null, null), model).agentRunId());

    assertThat(r.status()).isEqualTo(AgentRunStatus.BUDGET_EXHAUSTED);
    assertThat(r.stopReason()).startsWith("max_iterations");
    assertThat(r.usage().iterations()).isEqualTo(3);
    assertThat(r.steps()).hasSize(6);
    assertThat(r.budgetUse())
        .anySatisfy(
            b -> {
              assertThat(b.name()).isEqualTo("max_iterations");
              assertThat(b.left()).isZero();
            });
  }

  @Test
  void tokensPastTheBudgetEndItAndEstimatesAreSaid() throws Exception {
    ScriptedModel model = new ScriptedModel(false);
    model.fallback = r -> new ModelReply("```python\nprint(1)\n```", List.of(), null, null, null);
    AgentRunInfo r =
        finished(service.agents().start(budgets("spend", null, 200L, null), model).agentRunId());
    assertThat(r.status()).isEqualTo(AgentRunStatus.BUDGET_EXHAUSTED);
    assertThat(r.stopReason()).startsWith("token_budget").contains("estimated");
    assertThat(r.usage().tokensEstimated()).isTrue();
  }

  @Test
  void aModelThatSleepsEndsAtTheTimeBudget() throws Exception {
    ScriptedModel model = new ScriptedModel(false).then(ScriptedModel::hang);
    AgentRunInfo r =
        finished(service.agents().start(budgets("sleep", null, null, 2), model).agentRunId());
    assertThat(r.status()).isEqualTo(AgentRunStatus.BUDGET_EXHAUSTED);
    assertThat(r.stopReason()).startsWith("time_budget_seconds");
  }

  @Test
  void cancelDuringAModelCallStopsItAndALateAnswerChangesNothing() throws Exception {
    ScriptedModel model = new ScriptedModel(false).then(ScriptedModel::hang);
    String id = service.agents().start(task("hang"), model).agentRunId();
    assertThat(model.asked.await(30, TimeUnit.SECONDS)).isTrue();

    assertThat(service.agents().cancel(id).cancelled()).isTrue();
    AgentRunInfo r = service.agents().status(id, 0);
    assertThat(r.status()).isEqualTo(AgentRunStatus.CANCELLED);
    assertThat(service.agents().cancel(id).cancelled()).isFalse();
    assertThat(service.agents().status(id, 1).status()).isEqualTo(AgentRunStatus.CANCELLED);
  }

  @Test
  void cancelDuringACodeRunStopsItAndTheSessionStaysUsable() throws Exception {
    ScriptedModel model =
        new ScriptedModel(false).thenText("```python\nimport time\ntime.sleep(60)\n```");
    String id = service.agents().start(task("sleep in code"), model).agentRunId();
    AgentRunInfo running =
        Await.until(
            "its code runs",
            () -> service.agents().status(id, 0),
            r -> r.steps().stream().anyMatch(s -> s.kind() == AgentStepKind.CODE));
    String runId = running.steps().get(1).runId();

    assertThat(service.agents().cancel(id).cancelled()).isTrue();
    assertThat(service.agents().status(id, 0).status()).isEqualTo(AgentRunStatus.CANCELLED);
    RunRecord run =
        Await.until(
            "the code run stops", () -> service.getRun(runId, false), x -> x.status().isFinal());
    assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(
            service
                .run(new ExecutionRequest("print('still here')", running.sessionId(), null, 30))
                .stdout())
        .isEqualTo("still here\n");
  }

  @Test
  void anotherTenantsAgentRunIsNotFound() throws Exception {
    ScriptedModel model = new ScriptedModel(false).thenText("done");
    String id = service.agents().start(task("mine"), model).agentRunId();
    finished(id);
    var bob = service.forTenant("bob").agents();
    assertThatThrownBy(() -> bob.status(id, 0))
        .isInstanceOfSatisfying(
            PysandboxException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
    assertThatThrownBy(() -> bob.cancel(id))
        .isInstanceOfSatisfying(
            PysandboxException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
    assertThat(bob.list(10, null, null).agentRuns()).isEmpty();
  }

  @Test
  void withoutAClientModelSamplingIsRefusedNamingTheSettings() throws Exception {
    assertThatThrownBy(() -> service.agents().start(task("x"), null))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("agent_provider").contains("sampling");
            });
  }

  @Test
  void twoAgentRunsAtOnceInTwoSessions() throws Exception {
    ScriptedModel a =
        new ScriptedModel(false).thenText("```python\nv='a'\nprint(v)\n```").thenText("a");
    ScriptedModel b =
        new ScriptedModel(false).thenText("```python\nv='b'\nprint(v)\n```").thenText("b");
    String ia = service.agents().start(task("a"), a).agentRunId();
    String ib = service.agents().start(task("b"), b).agentRunId();
    AgentRunInfo ra = finished(ia);
    AgentRunInfo rb = finished(ib);
    assertThat(ra.answer()).isEqualTo("a");
    assertThat(rb.answer()).isEqualTo("b");
    assertThat(ra.sessionId()).isNotEqualTo(rb.sessionId());
    assertThat(ra.steps().get(1).output()).contains("a");
    assertThat(rb.steps().get(1).output()).contains("b");
  }

  @Test
  void aServerThatStopsRecordsItsAgentRunsInterrupted() throws Exception {
    ScriptedModel model = new ScriptedModel(false).then(ScriptedModel::hang);
    AgentRunInfo r = service.agents().start(task("hang"), model);
    Await.until("it asks", () -> model.requests.size(), n -> n > 0);
    service.close();
    service = TestServices.start(dataDir, Map.of());
    AgentRunInfo after = service.agents().status(r.agentRunId(), 0);
    assertThat(after.status()).isEqualTo(AgentRunStatus.INTERRUPTED);
    assertThat(after.steps()).isEmpty();
    assertThat(after.task()).isEqualTo("hang");
  }

  @Test
  void heldCodeWaitsForAPersonAndADenialIsToldToTheModel() throws Exception {
    service.close();
    service = TestServices.start(dataDir, Map.of("approval_policy", "always"));
    ScriptedModel model =
        new ScriptedModel(false)
            .thenText("```python\nprint('approved run')\n```")
            .thenText("```python\nprint('denied run')\n```")
            .thenText("finished");
    String id = service.agents().start(task("held"), model).agentRunId();
    AgentRunInfo waiting =
        Await.until(
            "it waits for approval",
            () -> service.agents().status(id, 0),
            r -> r.status() == AgentRunStatus.AWAITING_APPROVAL);
    assertThat(waiting.approvalId()).startsWith("apr_");
    assertThat(waiting.stopReason()).contains(waiting.approvalId());
    service.decideApproval(waiting.approvalId(), true, "alice", "test", "fine");
    AgentRunInfo second =
        Await.until(
            "the second code waits",
            () -> service.agents().status(id, 0),
            r ->
                r.status() == AgentRunStatus.AWAITING_APPROVAL
                    && !waiting.approvalId().equals(r.approvalId()));
    service.decideApproval(second.approvalId(), false, "alice", "test", "not that");
    AgentRunInfo r = finished(id);

    assertThat(r.status()).isEqualTo(AgentRunStatus.SUCCEEDED);
    assertThat(r.steps().get(1).output()).contains("approved run");
    assertThat(r.steps().get(3).runStatus()).isEqualTo("denied");
    List<ChatMessage> third = model.requests.get(2).messages();
    assertThat(third.get(third.size() - 1).text()).contains("refused by a person");
  }

  @Test
  void eventsAfterARestartAreNumberedAsTheyWereLive() throws Exception {
    ScriptedModel model =
        new ScriptedModel(false).thenText("```python\nprint('e')\n```").thenText("done");
    String id = service.agents().start(task("events"), model).agentRunId();
    finished(id);
    List<String> live = new java.util.concurrent.CopyOnWriteArrayList<>();
    service.agents().watch(id, 0, e -> live.add(e.seq() + " " + e.type())).close();
    service.close();
    service = TestServices.start(dataDir, Map.of());
    List<String> replayed = new java.util.ArrayList<>();
    service.agents().watch(id, 0, e -> replayed.add(e.seq() + " " + e.type())).close();

    assertThat(live)
        .containsExactly("1 step", "2 run", "3 step", "4 step", "5 step", "6 answer", "7 done");
    assertThat(replayed).isEqualTo(live);
    List<String> resumed = new java.util.ArrayList<>();
    service.agents().watch(id, 4, e -> resumed.add(e.seq() + " " + e.type())).close();
    assertThat(resumed).containsExactly("5 step", "6 answer", "7 done");
  }

  private static ModelReply call(String tool, String args) {
    return new ModelReply(
        "", List.of(new ToolCall("call_" + tool, tool, args)), 50, 10, "scripted-1");
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (java.io.IOException e) {
      return "";
    }
  }
}

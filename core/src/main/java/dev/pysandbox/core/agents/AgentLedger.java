package dev.pysandbox.core.agents;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.agent.AgentBudgets;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.api.agent.AgentStepKind;
import dev.pysandbox.api.agent.AgentUsage;
import dev.pysandbox.api.agent.ChatMessage;
import dev.pysandbox.api.agent.ModelException;
import dev.pysandbox.api.agent.ModelReply;
import dev.pysandbox.api.agent.ToolCall;
import dev.pysandbox.util.TimeSource;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

/**
 * One agent run's account: what it spent against its budgets, each step as it is recorded, and its
 * one end (whoever gets there first: the loop, a cancel, the time budget's watchdog, the server's
 * stop). Every change goes to the live run (what callers see), its events and the recorder (what is
 * kept).
 */
final class AgentLedger {
  private final LiveAgentRun live;
  private final AgentRecorder recorder;
  private final TimeSource time;
  private final AgentBudgets budgets;
  private final boolean recordContent;
  private final Instant startedAt;
  private final long deadlineNanos;
  private final AtomicBoolean ended = new AtomicBoolean();
  private final Runnable onEnd;
  private long promptTokens;
  private long completionTokens;
  private boolean estimated;
  private int iterations;
  private int subcalls;

  AgentLedger(
      LiveAgentRun live,
      AgentRecorder recorder,
      TimeSource time,
      boolean recordContent,
      Runnable onEnd) {
    this.live = live;
    this.recorder = recorder;
    this.time = time;
    this.budgets = live.info().budgets();
    this.recordContent = recordContent;
    this.startedAt = time.instant();
    this.deadlineNanos = System.nanoTime() + budgets.timeBudgetSeconds() * 1_000_000_000L;
    this.onEnd = onEnd;
  }

  LiveAgentRun live() {
    return live;
  }

  String sessionId() {
    return live.info().sessionId();
  }

  boolean recordContent() {
    return recordContent;
  }

  boolean ended() {
    return ended.get();
  }

  String now() {
    return time.instant().truncatedTo(ChronoUnit.MILLIS).toString();
  }

  long timeLeftMillis() {
    return (deadlineNanos - System.nanoTime()) / 1_000_000L;
  }

  int nextIndex() {
    return live.nextStepIndex();
  }

  // -- budgets
  // -------------------------------------------------------------------------------------

  /** Ends the run when a budget leaves no room for another model call. */
  synchronized boolean overBudgetBeforeCall() {
    if (iterations >= budgets.maxIterations()) {
      return exhausted(
          "max_iterations: "
              + iterations
              + " model replies and no final answer (max_iterations "
              + budgets.maxIterations()
              + ")");
    }
    if (promptTokens + completionTokens >= budgets.tokenBudget()) {
      return tokensExhausted();
    }
    if (timeLeftMillis() <= 0) {
      return timeExhausted();
    }
    return false;
  }

  /** Ends the run when the last reply took it past its token budget. */
  synchronized boolean overTokens() {
    return promptTokens + completionTokens > budgets.tokenBudget() && tokensExhausted();
  }

  private boolean tokensExhausted() {
    return exhausted(
        "token_budget: "
            + (promptTokens + completionTokens)
            + " tokens spent"
            + (estimated ? " (estimated in part: the provider gave no usage figures)" : "")
            + " of "
            + budgets.tokenBudget());
  }

  boolean timeExhausted() {
    return exhausted(
        "time_budget_seconds: "
            + budgets.timeBudgetSeconds()
            + " s passed before the agent answered");
  }

  private boolean exhausted(String reason) {
    if (end(AgentRunStatus.BUDGET_EXHAUSTED, null, reason, null, null)) {
      recorder.securityEvent(
          live.info(),
          SecurityEvent.Kind.AGENT_BUDGET_STOPPED,
          null,
          Map.of("budget", reason.substring(0, reason.indexOf(':')), "why", reason));
    }
    return true;
  }

  // -- steps
  // ---------------------------------------------------------------------------------------

  void modelStep(
      ModelReply reply, List<ChatMessage> sent, String prompt, long startNanos, String at) {
    int in = StepBuilder.promptTokens(reply, sent);
    int out = StepBuilder.completionTokens(reply);
    boolean guessed = StepBuilder.estimated(reply);
    synchronized (this) {
      promptTokens += in;
      completionTokens += out;
      estimated |= guessed;
      iterations++;
    }
    if (reply.model() != null && !reply.model().equals(live.info().model())) {
      live.setInfo(live.info().withModel(reply.model()));
    }
    String calls =
        reply.toolCalls().isEmpty()
            ? null
            : reply.toolCalls().stream().map(ToolCall::name).collect(Collectors.joining(", "));
    put(
        StepBuilder.of(nextIndex(), AgentStepKind.MODEL)
            .text(reply.text())
            .tool(calls)
            .prompt(prompt)
            .tokens(in, out, guessed)
            .timed(at, startNanos)
            .build());
  }

  /** Counts an llm_query call, or refuses it past max_subcalls or the token budget. */
  synchronized void takeSubcall() {
    if (ended()) {
      throw PysandboxException.invalid("llm_query: the agent run has ended");
    }
    if (subcalls >= budgets.maxSubcalls()) {
      throw PysandboxException.invalid(
          "llm_query: max_subcalls is spent ("
              + subcalls
              + " of "
              + budgets.maxSubcalls()
              + " sub-calls made)");
    }
    if (promptTokens + completionTokens >= budgets.tokenBudget()) {
      throw PysandboxException.invalid(
          "llm_query: the token budget is spent ("
              + (promptTokens + completionTokens)
              + " of "
              + budgets.tokenBudget()
              + " tokens)");
    }
    subcalls++;
  }

  /** A sub-call's step: its prompt, the answer, its tokens (counted against the budget). */
  void subcallStep(
      String prompt, ModelReply reply, List<ChatMessage> sent, long startNanos, String at) {
    int in = StepBuilder.promptTokens(reply, sent);
    int out = StepBuilder.completionTokens(reply);
    boolean guessed = StepBuilder.estimated(reply);
    synchronized (this) {
      promptTokens += in;
      completionTokens += out;
      estimated |= guessed;
    }
    put(
        StepBuilder.of(nextIndex(), AgentStepKind.SUBCALL)
            .text(reply.text())
            .prompt(recordContent ? Observations.bound(prompt, AgentLoop.PROMPT_KEPT_CHARS) : null)
            .tokens(in, out, guessed)
            .timed(at, startNanos)
            .build());
  }

  void errorStep(AgentStepKind kind, String tool, String error) {
    put(
        StepBuilder.of(nextIndex(), kind)
            .tool(tool)
            .error(error)
            .timed(now(), System.nanoTime())
            .build());
  }

  void toolStep(String tool, String observation, long startNanos, String at) {
    put(
        StepBuilder.of(nextIndex(), AgentStepKind.TOOL)
            .text(observation)
            .tool(tool)
            .timed(at, startNanos)
            .build());
  }

  void codeStarted(int index, String code, String runId, String at) {
    live.emit("run", null, runId, null, null);
    put(
        StepBuilder.of(index, AgentStepKind.CODE)
            .code(code)
            .run(runId, RunStatus.RUNNING.wireName(), null)
            .timed(at, -1)
            .build());
  }

  void codeFailed(int index, String code, String observation, long startNanos, String at) {
    put(
        StepBuilder.of(index, AgentStepKind.CODE)
            .text(observation)
            .code(code)
            .error(observation)
            .timed(at, startNanos)
            .build());
  }

  void codeEnded(
      int index, String code, RunRecord run, String observation, long startNanos, String at) {
    put(
        StepBuilder.of(index, AgentStepKind.CODE)
            .text(observation)
            .code(code)
            .run(run.runId(), run.status().wireName(), Observations.shortView(run))
            .timed(at, startNanos)
            .build());
  }

  private void put(AgentStep step) {
    if (ended()) {
      return;
    }
    live.putStep(step);
    live.setInfo(withUsage(live.info(), live.info().status(), live.info().approvalId()));
    recorder.step(live.info(), step);
    live.emit("step", step, step.runId(), null, null);
  }

  void securityEvent(SecurityEvent.Kind kind, String runId, Map<String, Object> detail) {
    recorder.securityEvent(live.info(), kind, runId, detail);
  }

  // -- approvals
  // -----------------------------------------------------------------------------------

  /** Waits for a person to decide a held run; its final record, or null when the run ended. */
  RunRecord awaitApproval(SandboxService service, RunRecord held) {
    live.setInfo(
        withUsage(live.info(), AgentRunStatus.AWAITING_APPROVAL, held.approvalId())
            .withStopReason("its code waits for approval " + held.approvalId()));
    recorder.state(live.info());
    live.emit("step", null, held.runId(), null, null);
    RunRecord run = held;
    while (!ended() && !run.status().isFinal()) {
      int wait = (int) Math.max(1, Math.min(5, timeLeftMillis() / 1000));
      if (timeLeftMillis() <= 0) {
        timeExhausted();
        return null;
      }
      run = service.getRun(held.runId(), false, wait);
    }
    if (ended()) {
      return null;
    }
    live.setInfo(withUsage(live.info(), AgentRunStatus.RUNNING, null).withStopReason(null));
    recorder.state(live.info());
    return service.getRun(run.runId(), true);
  }

  // -- the end
  // -------------------------------------------------------------------------------------

  void succeed(String answer) {
    end(AgentRunStatus.SUCCEEDED, answer, "the model gave its final answer", null, null);
  }

  void fail(String code, boolean retryable, String reason) {
    end(AgentRunStatus.FAILED, null, reason, code, retryable);
  }

  void providerFailed(ModelException e, int tries) {
    if (timeLeftMillis() <= 0) {
      timeExhausted();
      return;
    }
    fail(
        "provider_error",
        e.kind().retryable(),
        "the model provider failed ("
            + e.kind().name().toLowerCase(java.util.Locale.ROOT)
            + ") after "
            + tries
            + (tries == 1 ? " try" : " tries")
            + ": "
            + e.getMessage());
  }

  /** A caller's cancel, the server's stop: ends it now whatever is in flight. */
  boolean stop(AgentRunStatus status, String reason) {
    return end(status, null, reason, null, null);
  }

  /** The loop's thread ends here: a run it left open (it cannot) is failed. */
  void closeIfOpen() {
    fail("internal", false, "the agent loop stopped without an end");
  }

  private boolean end(
      AgentRunStatus status, String answer, String reason, String code, Boolean retryable) {
    if (!ended.compareAndSet(false, true)) {
      return false;
    }
    AgentRunInfo now = withUsage(live.info(), status, null);
    AgentRunInfo last =
        now.withState(
            status, answer, reason, code, retryable, null, now.usage(), now.budgetUse(), now());
    live.setInfo(last);
    recorder.state(last);
    if (answer != null) {
      live.emit("answer", null, null, answer, null);
    }
    live.emit("done", null, null, null, live.snapshot());
    live.finished();
    onEnd.run();
    return true;
  }

  private synchronized AgentRunInfo withUsage(
      AgentRunInfo info, AgentRunStatus status, String approvalId) {
    double seconds =
        Math.max(0, java.time.Duration.between(startedAt, time.instant()).toMillis() / 1000.0);
    AgentUsage usage =
        new AgentUsage(
            promptTokens,
            completionTokens,
            promptTokens + completionTokens,
            estimated,
            iterations,
            subcalls,
            seconds);
    return info.withState(
        status,
        info.answer(),
        info.stopReason(),
        info.errorCode(),
        info.retryable(),
        approvalId,
        usage,
        budgets.use(usage, 0),
        info.endedAt());
  }
}

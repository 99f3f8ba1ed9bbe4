package dev.pysandbox.core.agents;

import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.agent.AgentStepKind;
import dev.pysandbox.api.agent.ChatMessage;
import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.api.agent.ModelException;
import dev.pysandbox.api.agent.ModelReply;
import dev.pysandbox.api.agent.ModelRequest;
import dev.pysandbox.api.agent.ToolCall;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One agent run's loop, on a thread of its own: ask the model; run the code it wrote (a tool call,
 * or a ```python block) as an ordinary run of the session; give it the bounded result; until it
 * answers with nothing to run, a budget runs out, the provider fails past its retries, or a caller
 * cancels. The budgets, the usage and the end are {@link AgentLedger}'s.
 */
final class AgentLoop implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(AgentLoop.class);

  /** Tries of one model call (429, 5xx, timeouts), all within the time budget. */
  static final int MAX_TRIES = 3;

  /** The most characters of the messages sent that a step keeps as its prompt. */
  static final int PROMPT_KEPT_CHARS = 64 * 1024;

  private final AgentLedger ledger;
  private final LiveAgentRun live;
  private final SandboxService service;
  private final ModelClient model;
  private final String modelName;
  private final AgentContext context;
  private final List<ChatMessage> messages = new ArrayList<>();
  private int sentUpTo;
  private int strikes;

  AgentLoop(
      AgentLedger ledger,
      SandboxService service,
      ModelClient model,
      String modelName,
      AgentContext context) {
    this.ledger = ledger;
    this.live = ledger.live();
    this.service = service;
    this.model = model;
    this.modelName = modelName;
    this.context = context;
  }

  @Override
  public void run() {
    try {
      loop();
    } catch (RuntimeException | Error e) {
      log.warn("agent run {} failed", live.id(), e);
      ledger.fail("internal", false, "the agent run failed inside the server: " + e);
    } finally {
      ledger.closeIfOpen();
    }
  }

  private void loop() {
    messages.add(ChatMessage.system(context.systemPrompt(model.supportsTools())));
    messages.add(ChatMessage.user(live.info().task()));
    while (!ledger.ended()) {
      if (ledger.overBudgetBeforeCall()) {
        return;
      }
      ModelReply reply = ask();
      if (reply == null) {
        return;
      }
      if (ledger.overTokens()) {
        return;
      }
      if (!reply.toolCalls().isEmpty()) {
        messages.add(ChatMessage.assistant(reply.text(), reply.toolCalls()));
        for (ToolCall call : reply.toolCalls()) {
          String observation = tool(call);
          if (observation == null) {
            return;
          }
          messages.add(ChatMessage.tool(call, observation));
        }
        continue;
      }
      String code = CodeBlocks.extract(reply.text());
      if (code == null) {
        ledger.succeed(reply.text());
        return;
      }
      messages.add(ChatMessage.assistant(reply.text(), List.of()));
      String observation = runCode(code);
      if (observation == null) {
        return;
      }
      messages.add(
          ChatMessage.user(
              "Output of your code:\n"
                  + observation
                  + "\nGo on: run more code, or give your final answer with no code block."));
    }
  }

  // -- the model
  // -----------------------------------------------------------------------------------

  /** The model's reply, recorded as a step; null when the agent run ended instead. */
  private ModelReply ask() {
    String prompt = ledger.recordContent() ? promptDelta() : null;
    long started = System.nanoTime();
    String startedAt = ledger.now();
    for (int attempt = 1; ; attempt++) {
      long leftMs = ledger.timeLeftMillis();
      if (leftMs <= 0) {
        ledger.timeExhausted();
        return null;
      }
      Duration timeout = min(context.requestTimeout(), Duration.ofMillis(leftMs));
      if (!live.enterModel(Thread.currentThread())) {
        return null;
      }
      try {
        ModelReply reply =
            model.complete(
                new ModelRequest(
                    modelName,
                    List.copyOf(messages),
                    model.supportsTools() ? AgentTools.SPECS : List.of(),
                    context.maxTokens(),
                    timeout));
        live.leave();
        if (ledger.ended()) {
          return null; // cancelled while it answered: a late answer changes nothing
        }
        sentUpTo = messages.size();
        ledger.modelStep(reply, messages, prompt, started, startedAt);
        return reply;
      } catch (ModelException e) {
        live.leave();
        if (ledger.ended()) {
          return null;
        }
        if (e.kind() == ModelException.Kind.MALFORMED && strike()) {
          messages.add(
              ChatMessage.user(
                  "Your last reply could not be read ("
                      + e.getMessage()
                      + "). Reply again: code to run, or your final answer."));
          ledger.errorStep(AgentStepKind.MODEL, null, "malformed reply: " + e.getMessage());
          continue;
        }
        if (!e.kind().retryable() || attempt >= MAX_TRIES) {
          ledger.providerFailed(e, attempt);
          return null;
        }
        long waitMs =
            e.retryAfter() != null ? e.retryAfter().toMillis() : 500L * (1L << (attempt - 1));
        if (waitMs >= ledger.timeLeftMillis()) {
          ledger.providerFailed(e, attempt);
          return null;
        }
        log.info(
            "agent run {}: model call {} failed ({}), again in {} ms",
            live.id(),
            attempt,
            e.kind(),
            waitMs);
        if (!pause(waitMs)) {
          return null;
        }
      } catch (PysandboxException e) {
        live.leave();
        if (!ledger.ended()) {
          ledger.fail(e.code().wireName(), e.retryable(), e.getMessage());
        }
        return null;
      }
    }
  }

  /** Sleeps before a retry; a cancel wakes it (false). */
  private boolean pause(long millis) {
    if (!live.enterModel(Thread.currentThread())) {
      return false;
    }
    try {
      Thread.sleep(millis);
      return !ledger.ended();
    } catch (InterruptedException e) {
      return false;
    } finally {
      live.leave();
    }
  }

  /** The messages added since the last call, as text (what a step's prompt keeps). */
  private String promptDelta() {
    StringBuilder b = new StringBuilder();
    for (ChatMessage m : messages.subList(sentUpTo, messages.size())) {
      b.append(m.role().name().toLowerCase(java.util.Locale.ROOT)).append(": ").append(m.text());
      m.toolCalls()
          .forEach(
              c ->
                  b.append("\n[call ")
                      .append(c.name())
                      .append(' ')
                      .append(c.arguments())
                      .append(']'));
      b.append('\n');
    }
    return Observations.bound(b.toString(), PROMPT_KEPT_CHARS);
  }

  /** The first strike of the model breaking the rules is told to it; the second fails the run. */
  private boolean strike() {
    strikes++;
    if (strikes > 1) {
      ledger.fail(
          "invalid_argument",
          false,
          "the model broke the rules again after it was told: see the last steps");
      return false;
    }
    return true;
  }

  // -- tools
  // ---------------------------------------------------------------------------------------

  /** A tool call's observation for the model; null when the agent run ended. */
  private String tool(ToolCall call) {
    AgentTools.Checked checked = AgentTools.check(call);
    if (checked.refusal() != null) {
      ledger.securityEvent(
          SecurityEvent.Kind.AGENT_TOOL_REFUSED,
          null,
          Map.of("tool", String.valueOf(call.name()), "why", checked.refusal()));
      if (!strike()) {
        return null;
      }
      ledger.errorStep(AgentStepKind.TOOL, call.name(), checked.refusal());
      return "error: " + checked.refusal();
    }
    if (checked.code() != null) {
      return runCode(checked.code());
    }
    long started = System.nanoTime();
    String startedAt = ledger.now();
    String observation =
        checked.path() != null
            ? AgentTools.readFile(
                service, ledger.sessionId(), checked.path(), context.observationChars())
            : AgentTools.listFiles(service, ledger.sessionId());
    ledger.toolStep(call.name(), observation, started, startedAt);
    return observation;
  }

  // -- code
  // ----------------------------------------------------------------------------------------

  /** Runs {@code code} in the session; its observation, or null when the agent run ended. */
  private String runCode(String code) {
    long leftSeconds = ledger.timeLeftMillis() / 1000;
    if (leftSeconds < 1) {
      ledger.timeExhausted();
      return null;
    }
    int timeout = (int) Math.min(context.runTimeoutSeconds(), leftSeconds);
    int index = ledger.nextIndex();
    long started = System.nanoTime();
    String startedAt = ledger.now();
    RunListener listener =
        new RunListener() {
          @Override
          public void started(String runId) {
            live.enterCode(runId);
            ledger.codeStarted(index, code, runId, startedAt);
          }

          @Override
          public String subcall(String prompt) {
            return AgentLoop.this.subcall(prompt);
          }
        };
    RunRecord run;
    try {
      run =
          service.run(
              new ExecutionRequest(
                  code,
                  ledger.sessionId(),
                  "agent " + live.id() + " step " + index,
                  timeout,
                  null,
                  null,
                  false,
                  List.of()),
              listener);
    } catch (PysandboxException e) {
      if (ledger.ended()) {
        return null;
      }
      String observation = "error: " + e.code().wireName() + ": " + e.getMessage();
      ledger.codeFailed(index, code, observation, started, startedAt);
      if (e.code() == dev.pysandbox.api.ErrorCode.SESSION_BUSY) {
        return observation;
      }
      ledger.fail(e.code().wireName(), e.retryable(), "its code could not run: " + e.getMessage());
      return null;
    } finally {
      live.leave();
    }
    if (run.status() == RunStatus.AWAITING_APPROVAL) {
      run = ledger.awaitApproval(service, run);
      if (run == null) {
        return null;
      }
    }
    String observation =
        run.status() == RunStatus.DENIED
            ? "the code was refused by a person (run " + run.runId() + " denied): " + run.message()
            : Observations.ofRun(run, context.observationChars());
    ledger.codeEnded(index, code, run, observation, started, startedAt);
    return ledger.ended() ? null : observation;
  }

  /**
   * llm_query from the code: the same model, asked with the prompt alone, counted against
   * max_subcalls and the token budget; called on a server thread while the code waits.
   */
  private String subcall(String prompt) {
    ledger.takeSubcall();
    long started = System.nanoTime();
    String startedAt = ledger.now();
    long leftMs = ledger.timeLeftMillis();
    if (leftMs <= 0) {
      throw PysandboxException.invalid("llm_query: the agent run's time budget is spent");
    }
    List<ChatMessage> sent =
        List.of(
            ChatMessage.system(
                "Answer the question or do the task below directly and briefly, in text."),
            ChatMessage.user(prompt));
    ModelReply reply;
    try {
      reply =
          model.complete(
              new ModelRequest(
                  modelName,
                  sent,
                  List.of(),
                  context.maxTokens(),
                  min(context.requestTimeout(), Duration.ofMillis(leftMs))));
    } catch (ModelException e) {
      throw new PysandboxException(
          dev.pysandbox.api.ErrorCode.PROVIDER_ERROR,
          "llm_query: the model provider failed (" + e.kind() + "): " + e.getMessage());
    }
    ledger.subcallStep(prompt, reply, sent, started, startedAt);
    return reply.text();
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}

package dev.pysandbox.core.agents;

import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.api.agent.AgentStepKind;
import dev.pysandbox.api.agent.ChatMessage;
import dev.pysandbox.api.agent.ModelReply;
import java.util.List;

/** An {@link AgentStep} field by field (most steps fill a few of its fifteen), and token counts. */
final class StepBuilder {
  private final int index;
  private final AgentStepKind kind;
  private String text;
  private String code;
  private String runId;
  private String runStatus;
  private String output;
  private String tool;
  private String prompt;
  private Integer tokensIn;
  private Integer tokensOut;
  private Boolean estimated;
  private long durationMs;
  private String startedAt;
  private String error;

  private StepBuilder(int index, AgentStepKind kind) {
    this.index = index;
    this.kind = kind;
  }

  static StepBuilder of(int index, AgentStepKind kind) {
    return new StepBuilder(index, kind);
  }

  StepBuilder text(String text) {
    this.text = text;
    return this;
  }

  StepBuilder code(String code) {
    this.code = code;
    return this;
  }

  StepBuilder run(String runId, String runStatus, String output) {
    this.runId = runId;
    this.runStatus = runStatus;
    this.output = output;
    return this;
  }

  StepBuilder tool(String tool) {
    this.tool = tool;
    return this;
  }

  StepBuilder prompt(String prompt) {
    this.prompt = prompt;
    return this;
  }

  StepBuilder tokens(int in, int out, boolean estimated) {
    this.tokensIn = in;
    this.tokensOut = out;
    this.estimated = estimated;
    return this;
  }

  /** When it began and how long it took since {@code startNanos} (-1: it has not ended). */
  StepBuilder timed(String startedAt, long startNanos) {
    this.startedAt = startedAt;
    this.durationMs = startNanos < 0 ? -1 : (System.nanoTime() - startNanos) / 1_000_000L;
    return this;
  }

  StepBuilder error(String error) {
    this.error = error;
    return this;
  }

  AgentStep build() {
    return new AgentStep(
        index,
        kind,
        text,
        code,
        runId,
        runStatus,
        output,
        tool,
        prompt,
        tokensIn,
        tokensOut,
        estimated,
        durationMs,
        startedAt,
        error);
  }

  /** Prompt tokens of a reply: the provider's figure, else about 4 characters a token. */
  static int promptTokens(ModelReply reply, List<ChatMessage> sent) {
    return reply.promptTokens() != null
        ? reply.promptTokens()
        : estimate(sent.stream().mapToInt(m -> m.text().length() + 16).sum());
  }

  /**
   * Completion tokens of a reply: the provider's figure, else estimated from its text and calls.
   */
  static int completionTokens(ModelReply reply) {
    return reply.completionTokens() != null
        ? reply.completionTokens()
        : estimate(
            reply.text().length()
                + reply.toolCalls().stream()
                    .mapToInt(c -> String.valueOf(c.arguments()).length())
                    .sum());
  }

  static boolean estimated(ModelReply reply) {
    return reply.promptTokens() == null || reply.completionTokens() == null;
  }

  private static int estimate(int chars) {
    return Math.max(1, (chars + 3) / 4);
  }
}

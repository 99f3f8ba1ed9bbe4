package dev.pysandbox.api.agent;

import java.util.List;

/**
 * A model's answer.
 *
 * @param text its text (may be empty when it made tool calls)
 * @param toolCalls the tools it called
 * @param promptTokens prompt tokens as the provider counted them, or null when it gave none
 * @param completionTokens completion tokens as the provider counted them, or null
 * @param model the model that answered, as the provider named it, or null
 */
public record ModelReply(
    String text,
    List<ToolCall> toolCalls,
    Integer promptTokens,
    Integer completionTokens,
    String model) {
  public ModelReply {
    text = text == null ? "" : text;
    toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
  }
}

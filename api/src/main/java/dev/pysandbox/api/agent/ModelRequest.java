package dev.pysandbox.api.agent;

import java.time.Duration;
import java.util.List;

/**
 * One request to a model.
 *
 * @param model the model's name, or null for the client's default
 * @param messages the conversation so far, the system message first
 * @param tools the tools it may call (empty: none; the code comes in a ```python block)
 * @param maxTokens the most tokens its answer may have
 * @param timeout how long the call may take, retries not included
 */
public record ModelRequest(
    String model,
    List<ChatMessage> messages,
    List<ToolSpec> tools,
    int maxTokens,
    Duration timeout) {
  public ModelRequest {
    messages = List.copyOf(messages);
    tools = tools == null ? List.of() : List.copyOf(tools);
  }
}

package dev.pysandbox.api.agent;

import java.util.List;

/**
 * One message of a conversation with a model.
 *
 * @param role who says it
 * @param text what it says (may be empty for an assistant message with tool calls only)
 * @param toolCalls the tool calls an assistant message made
 * @param toolCallId the call a tool message answers
 * @param toolName the tool a tool message answers for
 */
public record ChatMessage(
    Role role, String text, List<ToolCall> toolCalls, String toolCallId, String toolName) {
  public enum Role {
    SYSTEM,
    USER,
    ASSISTANT,
    TOOL
  }

  public ChatMessage {
    text = text == null ? "" : text;
    toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
  }

  public static ChatMessage system(String text) {
    return new ChatMessage(Role.SYSTEM, text, List.of(), null, null);
  }

  public static ChatMessage user(String text) {
    return new ChatMessage(Role.USER, text, List.of(), null, null);
  }

  public static ChatMessage assistant(String text, List<ToolCall> calls) {
    return new ChatMessage(Role.ASSISTANT, text, calls, null, null);
  }

  public static ChatMessage tool(ToolCall call, String result) {
    return new ChatMessage(Role.TOOL, result, List.of(), call.id(), call.name());
  }
}

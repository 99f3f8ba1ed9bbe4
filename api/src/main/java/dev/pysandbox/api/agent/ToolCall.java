package dev.pysandbox.api.agent;

/**
 * A tool call a model made.
 *
 * @param id the provider's id for it (answered by a tool message with that id)
 * @param name the tool
 * @param arguments its arguments as the model wrote them: JSON text, maybe malformed
 */
public record ToolCall(String id, String name, String arguments) {}

package dev.pysandbox.models;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;
import dev.pysandbox.api.agent.ChatMessage;
import dev.pysandbox.api.agent.ModelReply;
import dev.pysandbox.api.agent.ModelRequest;
import dev.pysandbox.api.agent.ToolCall;
import dev.pysandbox.api.agent.ToolSpec;
import java.util.List;

/** Our requests, messages and tools to LangChain4j's, and its responses to our replies. */
final class Conversions {
  private Conversions() {}

  static ChatRequest request(ModelRequest request) {
    ChatRequest.Builder b =
        ChatRequest.builder()
            .messages(request.messages().stream().map(Conversions::message).toList());
    if (request.model() != null && !request.model().isBlank()) {
      b.modelName(request.model());
    }
    if (request.maxTokens() > 0) {
      b.maxOutputTokens(request.maxTokens());
    }
    if (!request.tools().isEmpty()) {
      b.toolSpecifications(request.tools().stream().map(Conversions::tool).toList());
    }
    return b.build();
  }

  static dev.langchain4j.data.message.ChatMessage message(ChatMessage m) {
    return switch (m.role()) {
      case SYSTEM -> SystemMessage.from(m.text());
      case USER -> UserMessage.from(m.text());
      case ASSISTANT ->
          m.toolCalls().isEmpty()
              ? AiMessage.from(m.text())
              : AiMessage.builder()
                  .text(m.text().isEmpty() ? null : m.text())
                  .toolExecutionRequests(m.toolCalls().stream().map(Conversions::call).toList())
                  .build();
      case TOOL -> ToolExecutionResultMessage.from(m.toolCallId(), m.toolName(), m.text());
    };
  }

  static ToolExecutionRequest call(ToolCall c) {
    return ToolExecutionRequest.builder()
        .id(c.id())
        .name(c.name())
        .arguments(c.arguments() == null ? "{}" : c.arguments())
        .build();
  }

  static ToolSpecification tool(ToolSpec spec) {
    return ToolSpecification.builder()
        .name(spec.name())
        .description(spec.description())
        .parameters(JsonSchemas.parameters(spec.parameters()))
        .build();
  }

  static ModelReply reply(ChatResponse response) {
    AiMessage ai = response.aiMessage();
    if (ai == null) {
      throw new IllegalStateException("the answer has no message");
    }
    List<ToolCall> calls =
        ai.hasToolExecutionRequests()
            ? ai.toolExecutionRequests().stream()
                .map(r -> new ToolCall(r.id(), r.name(), r.arguments()))
                .toList()
            : List.of();
    TokenUsage usage = response.tokenUsage();
    return new ModelReply(
        ai.text(),
        calls,
        usage == null ? null : usage.inputTokenCount(),
        usage == null ? null : usage.outputTokenCount(),
        response.modelName());
  }
}

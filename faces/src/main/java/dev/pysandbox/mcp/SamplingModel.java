package dev.pysandbox.mcp;

import dev.pysandbox.api.agent.ChatMessage;
import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.api.agent.ModelException;
import dev.pysandbox.api.agent.ModelReply;
import dev.pysandbox.api.agent.ModelRequest;
import dev.pysandbox.util.DaemonThreads;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The MCP client's own model, asked through {@code sampling/createMessage} (agent_provider
 * sampling): no key on the server, and the client may show or refuse each request. Sampling carries
 * no tools here, so the model writes its code in a ```python block; the system message goes as the
 * request's systemPrompt and tool results as user messages. The client gives no token figures: the
 * agent loop estimates them, and says so.
 */
final class SamplingModel implements ModelClient {
  /** The threads that wait for clients' answers, so that the agent's thread can stop waiting. */
  private static final ExecutorService WAITS =
      Executors.newCachedThreadPool(DaemonThreads.named("pysandbox-mcp-sampling"));

  private final McpSyncServerExchange exchange;

  private SamplingModel(McpSyncServerExchange exchange) {
    this.exchange = exchange;
  }

  /** The client's model, or null when the client did not declare the sampling capability. */
  static ModelClient of(McpSyncServerExchange exchange) {
    if (exchange == null) {
      return null;
    }
    McpSchema.ClientCapabilities caps = exchange.getClientCapabilities();
    return caps == null || caps.sampling() == null ? null : new SamplingModel(exchange);
  }

  @Override
  public ModelReply complete(ModelRequest request) {
    McpSchema.CreateMessageRequest.Builder b =
        McpSchema.CreateMessageRequest.builder(messages(request.messages()), request.maxTokens())
            .includeContext(McpSchema.CreateMessageRequest.ContextInclusionStrategy.NONE);
    request.messages().stream()
        .filter(m -> m.role() == ChatMessage.Role.SYSTEM)
        .findFirst()
        .ifPresent(m -> b.systemPrompt(m.text()));
    if (request.model() != null) {
      b.modelPreferences(McpSchema.ModelPreferences.builder().addHint(request.model()).build());
    }
    McpSchema.CreateMessageRequest sent = b.build();
    Future<McpSchema.CreateMessageResult> answer = WAITS.submit(() -> exchange.createMessage(sent));
    McpSchema.CreateMessageResult r;
    try {
      r = answer.get(request.timeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      answer.cancel(true);
      Thread.currentThread().interrupt();
      throw new ModelException(ModelException.Kind.UNAVAILABLE, "the request was cancelled");
    } catch (TimeoutException e) {
      answer.cancel(true);
      throw new ModelException(
          ModelException.Kind.TIMEOUT,
          "the client's model gave no answer within " + request.timeout().toSeconds() + " s");
    } catch (ExecutionException e) {
      throw failure(e.getCause());
    }
    if (r == null || r.content() == null) {
      throw new ModelException(ModelException.Kind.MALFORMED, "the client's answer has no content");
    }
    if (!(r.content() instanceof McpSchema.TextContent text)) {
      throw new ModelException(
          ModelException.Kind.MALFORMED,
          "the client's answer is not text (" + r.content().getClass().getSimpleName() + ")");
    }
    return new ModelReply(text.text(), List.of(), null, null, r.model());
  }

  private static ModelException failure(Throwable cause) {
    if (cause instanceof McpError e && e.getJsonRpcError() != null) {
      return new ModelException(
          ModelException.Kind.REFUSED,
          "the client refused the sampling request: " + e.getJsonRpcError().message());
    }
    String why = cause == null ? "unknown" : cause.getMessage();
    return new ModelException(
        ModelException.Kind.UNAVAILABLE,
        "the client's model could not be asked: " + why,
        null,
        null);
  }

  private static List<McpSchema.SamplingMessage> messages(List<ChatMessage> messages) {
    List<McpSchema.SamplingMessage> out = new ArrayList<>();
    for (ChatMessage m : messages) {
      switch (m.role()) {
        case SYSTEM -> {}
        case ASSISTANT ->
            out.add(new McpSchema.SamplingMessage(McpSchema.Role.ASSISTANT, text(m.text())));
        case USER -> out.add(new McpSchema.SamplingMessage(McpSchema.Role.USER, text(m.text())));
        case TOOL ->
            out.add(
                new McpSchema.SamplingMessage(
                    McpSchema.Role.USER, text("Result of " + m.toolName() + ":\n" + m.text())));
      }
    }
    return out;
  }

  private static McpSchema.TextContent text(String text) {
    return McpSchema.TextContent.builder(text).build();
  }

  @Override
  public String provider() {
    return "sampling";
  }
}

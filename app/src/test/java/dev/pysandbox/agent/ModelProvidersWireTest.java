package dev.pysandbox.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Fast;
import dev.pysandbox.api.agent.AgentBudgets;
import dev.pysandbox.api.agent.ChatMessage;
import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.api.agent.ModelReply;
import dev.pysandbox.api.agent.ModelRequest;
import dev.pysandbox.api.agent.ToolCall;
import dev.pysandbox.api.agent.ToolSpec;
import dev.pysandbox.config.AgentConfig;
import dev.pysandbox.models.ModelClients;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The openai and anthropic providers through LangChain4j against {@link ScriptedModelServer}: what
 * a reply becomes (text, usage, tool calls with their raw arguments) and what the requests carry
 * (the key, the tools, the model, a tool's result in the next request).
 */
@Fast
@Timeout(30)
class ModelProvidersWireTest {
  static final String KEY = "sk-test-0123456789abcdef";
  static final ToolSpec RUN_PYTHON =
      new ToolSpec(
          "run_python",
          "Runs Python in the session",
          Map.of(
              "type",
              "object",
              "properties",
              Map.of("code", Map.of("type", "string", "description", "the code")),
              "required",
              List.of("code")));

  private static final ObjectMapper JSON = new ObjectMapper();

  private ScriptedModelServer server;

  @BeforeEach
  void start() throws Exception {
    server = new ScriptedModelServer();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  static AgentConfig config(String provider, String baseUrl, String key) {
    return new AgentConfig(
        provider,
        Optional.of(URI.create(baseUrl)),
        "scripted-model",
        Optional.ofNullable(key),
        key == null ? "" : "the test",
        AgentBudgets.DEFAULTS,
        Duration.ofSeconds(20),
        8_000,
        true,
        1_000,
        64,
        16);
  }

  static ModelRequest ask(List<ChatMessage> messages, List<ToolSpec> tools) {
    return new ModelRequest(null, messages, tools, 500, Duration.ofSeconds(20));
  }

  private ModelClient client(String provider) {
    return ModelClients.create(config(provider, server.baseUrl(), KEY));
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void complete_textReply_givesTextUsageAndModel(String provider) {
    server.enqueue(ScriptedReply.text("The answer is 42.").usage(120, 7));

    ModelReply reply =
        client(provider)
            .complete(
                ask(
                    List.of(ChatMessage.system("You are careful."), ChatMessage.user("6 * 7?")),
                    List.of()));

    assertThat(reply.text()).isEqualTo("The answer is 42.");
    assertThat(reply.toolCalls()).isEmpty();
    assertThat(reply.promptTokens()).isEqualTo(120);
    assertThat(reply.completionTokens()).isEqualTo(7);
    assertThat(reply.model()).isEqualTo("scripted-model");
    ScriptedModelServer.Recorded sent = server.request(1);
    assertThat(sent.body().path("model").asText()).isEqualTo("scripted-model");
    assertThat(sent.body().toString()).contains("6 * 7?").contains("You are careful.");
    if (provider.equals("openai")) {
      assertThat(sent.path()).isEqualTo("/v1/chat/completions");
      assertThat(sent.header("Authorization")).isEqualTo("Bearer " + KEY);
    } else {
      assertThat(sent.path()).isEqualTo("/v1/messages");
      assertThat(sent.header("x-api-key")).isEqualTo(KEY);
      assertThat(sent.body().path("max_tokens").asInt()).isEqualTo(500);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void complete_withoutUsage_givesNullTokenCounts(String provider) {
    server.enqueue(ScriptedReply.text("no figures"));

    ModelReply reply = client(provider).complete(ask(List.of(ChatMessage.user("hi")), List.of()));

    assertThat(reply.text()).isEqualTo("no figures");
    assertThat(reply.promptTokens()).isNull();
    assertThat(reply.completionTokens()).isNull();
  }

  @Test
  void complete_requestModel_overridesTheDefault() {
    server.enqueue(ScriptedReply.text("ok"));

    ModelReply reply =
        client("openai")
            .complete(
                new ModelRequest(
                    "another-model",
                    List.of(ChatMessage.user("hi")),
                    List.of(),
                    100,
                    Duration.ofSeconds(20)));

    assertThat(server.request(1).body().path("model").asText()).isEqualTo("another-model");
    assertThat(reply.model()).isEqualTo("another-model");
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void complete_toolCallReply_givesToolCallsWithTheirArguments_andSendsTheToolSpecs(String provider)
      throws Exception {
    server.enqueue(
        ScriptedReply.text("Let me compute.")
            .withToolCall("run_python", "{\"code\": \"print(6 * 7)\"}")
            .withToolCall("list_files", "{}")
            .usage(50, 20));

    ModelReply reply =
        client(provider).complete(ask(List.of(ChatMessage.user("6 * 7?")), List.of(RUN_PYTHON)));

    assertThat(reply.toolCalls())
        .extracting(ToolCall::id, ToolCall::name)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("call_1_0", "run_python"),
            org.assertj.core.groups.Tuple.tuple("call_1_1", "list_files"));
    assertThat(JSON.readTree(reply.toolCalls().get(0).arguments()))
        .isEqualTo(JSON.readTree("{\"code\": \"print(6 * 7)\"}"));
    if (provider.equals("openai")) {
      // as the model wrote them, spaces and all
      assertThat(reply.toolCalls().get(0).arguments()).isEqualTo("{\"code\": \"print(6 * 7)\"}");
    }
    JsonNode tool = server.request(1).body().path("tools").path(0);
    JsonNode schema =
        provider.equals("openai")
            ? tool.path("function").path("parameters")
            : tool.path("input_schema");
    assertThat(provider.equals("openai") ? tool.path("function").path("name") : tool.path("name"))
        .isEqualTo(JSON.getNodeFactory().textNode("run_python"));
    assertThat(schema.path("properties").path("code").path("type").asText()).isEqualTo("string");
    assertThat(schema.path("required").toString()).isEqualTo("[\"code\"]");
  }

  @Test
  void complete_malformedToolArguments_arePassedAsWritten() {
    server.enqueue(ScriptedReply.toolCall("run_python", "{\"code\": print(1"));

    ModelReply reply =
        client("openai").complete(ask(List.of(ChatMessage.user("go")), List.of(RUN_PYTHON)));

    assertThat(reply.text()).isEmpty();
    assertThat(reply.toolCalls())
        .singleElement()
        .extracting(ToolCall::arguments)
        .isEqualTo("{\"code\": print(1");
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void complete_toolResult_isSentBackInTheNextRequest(String provider) {
    ModelClient client = client(provider);
    server.enqueue(
        ScriptedReply.toolCall("run_python", "{\"code\": \"print(6 * 7)\"}"),
        ScriptedReply.text("It is 42.").usage(80, 4));
    List<ChatMessage> conversation =
        new java.util.ArrayList<>(List.of(ChatMessage.system("sys"), ChatMessage.user("6 * 7?")));

    ModelReply first = client.complete(ask(conversation, List.of(RUN_PYTHON)));
    ToolCall call = first.toolCalls().get(0);
    conversation.add(ChatMessage.assistant(first.text(), first.toolCalls()));
    conversation.add(ChatMessage.tool(call, "42\n"));
    ModelReply second = client.complete(ask(conversation, List.of(RUN_PYTHON)));

    assertThat(second.text()).isEqualTo("It is 42.");
    JsonNode messages = server.request(2).body().path("messages");
    if (provider.equals("openai")) {
      JsonNode assistant = messages.path(2);
      assertThat(assistant.path("role").asText()).isEqualTo("assistant");
      assertThat(assistant.path("tool_calls").path(0).path("id").asText()).isEqualTo(call.id());
      JsonNode result = messages.path(3);
      assertThat(result.path("role").asText()).isEqualTo("tool");
      assertThat(result.path("tool_call_id").asText()).isEqualTo(call.id());
      assertThat(result.path("content").asText()).isEqualTo("42\n");
    } else {
      // Anthropic: the system message goes apart; user, assistant (tool_use), user (tool_result)
      JsonNode toolUse = messages.path(1).path("content").path(0);
      assertThat(toolUse.path("type").asText()).isEqualTo("tool_use");
      assertThat(toolUse.path("id").asText()).isEqualTo(call.id());
      JsonNode result = messages.path(2).path("content").path(0);
      assertThat(result.path("type").asText()).isEqualTo("tool_result");
      assertThat(result.path("tool_use_id").asText()).isEqualTo(call.id());
      assertThat(result.path("content").toString()).contains("42");
    }
  }
}

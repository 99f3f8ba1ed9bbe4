package dev.pysandbox.models;

import dev.langchain4j.model.anthropic.AnthropicChatModel;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.ollama.OllamaChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.config.AgentConfig;
import java.net.URI;
import java.time.Clock;
import java.util.Map;

/**
 * Makes the {@link ModelClient} that the agent settings name: {@code openai} (any OpenAI-compatible
 * chat-completions API), {@code anthropic} or {@code ollama}, each through LangChain4j's chat model
 * with pysandbox's HTTP client ({@link ExchangeHttpClient}) and no retries of its own. {@code
 * sampling} is not made here: the MCP face asks the client's model.
 */
public final class ModelClients {
  /** The public address of each provider, used when agent_base_url is empty. */
  public static final Map<String, URI> DEFAULT_BASE_URLS =
      Map.of(
          "openai", URI.create("https://api.openai.com/v1"),
          "anthropic", URI.create("https://api.anthropic.com/v1"),
          "ollama", URI.create("http://localhost:11434"));

  private ModelClients() {}

  /**
   * The client of {@code config.provider()}: thread-safe, one per server.
   *
   * @throws PysandboxException invalid_argument for a provider this cannot make (sampling, an
   *     unknown name), or openai or anthropic without a key
   */
  public static ModelClient create(AgentConfig config) {
    return create(config, Clock.systemUTC());
  }

  /** As {@link #create(AgentConfig)}, reading Retry-After dates on {@code clock}. */
  static ModelClient create(AgentConfig config, Clock clock) {
    String provider = config.provider();
    URI base = DEFAULT_BASE_URLS.get(provider);
    if (base == null) {
      throw new PysandboxException(
          ErrorCode.INVALID_ARGUMENT,
          "agent_provider "
              + provider
              + " has no model client here: name openai, anthropic or ollama (sampling asks the"
              + " MCP client's own model)");
    }
    base = config.baseUrl().orElse(base);
    String model = config.model() == null || config.model().isBlank() ? null : config.model();
    String key = config.apiKey().filter(k -> !k.isBlank()).orElse(null);
    if (key == null && !provider.equals("ollama")) {
      throw new PysandboxException(
          ErrorCode.INVALID_ARGUMENT,
          "agent_provider "
              + provider
              + " needs an API key: set PYSANDBOX_AGENT_API_KEY, or agent_api_key_file to a file"
              + " holding it (or use agent_provider sampling, which needs none)");
    }
    ExchangeHttpClient.Builder http = ExchangeHttpClient.builder(base, clock);
    ChatModel chat =
        switch (provider) {
          case "openai" ->
              OpenAiChatModel.builder()
                  .httpClientBuilder(http)
                  .baseUrl(base.toString())
                  .apiKey(key)
                  .modelName(model)
                  .timeout(config.requestTimeout())
                  .maxRetries(0)
                  .build();
          case "anthropic" ->
              AnthropicChatModel.builder()
                  .httpClientBuilder(http)
                  .baseUrl(base.toString())
                  .apiKey(key)
                  .modelName(model)
                  .maxTokens(config.maxTokens())
                  .timeout(config.requestTimeout())
                  .maxRetries(0)
                  .build();
          default ->
              OllamaChatModel.builder()
                  .httpClientBuilder(http)
                  .baseUrl(base.toString())
                  .modelName(model)
                  .timeout(config.requestTimeout())
                  .maxRetries(0)
                  .build();
        };
    return new LangChainModelClient(provider, model, chat, key);
  }
}

package dev.pysandbox.config;

import dev.pysandbox.api.agent.AgentBudgets;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;

/**
 * The settings of agent runs (issue 26), read by {@link ConfigReader}.
 *
 * @param provider {@code sampling} (the MCP client's own model), {@code openai}, {@code anthropic}
 *     or {@code ollama}
 * @param baseUrl the provider's API address; empty for the provider's public default
 * @param model the model asked when a call names none; empty: the provider's or client's choice
 * @param apiKey the key, from PYSANDBOX_AGENT_API_KEY or agent_api_key_file; never shown
 * @param apiKeySource where the key came from, in words, or empty when there is none
 * @param budgets the budgets of an agent run that asks for no others
 * @param requestTimeout how long one model call may take
 * @param observationChars the most characters of a code run's output the model is given
 * @param recordContent whether the prompts sent and replies received are kept with the steps
 * @param maxTokens the most tokens one model reply may have
 * @param maxConcurrent agent runs running at once on this server
 * @param maxConcurrentPerTenant agent runs running at once for one tenant
 */
public record AgentConfig(
    String provider,
    Optional<URI> baseUrl,
    String model,
    Optional<String> apiKey,
    String apiKeySource,
    AgentBudgets budgets,
    Duration requestTimeout,
    int observationChars,
    boolean recordContent,
    int maxTokens,
    int maxConcurrent,
    int maxConcurrentPerTenant) {

  /** The providers agent_provider may name. */
  public static final java.util.List<String> PROVIDERS =
      java.util.List.of("sampling", "openai", "anthropic", "ollama");

  /** What a server whose settings name nothing uses (the {@link AgentSetting} defaults). */
  public static final AgentConfig DEFAULTS =
      new AgentConfig(
          "sampling",
          Optional.empty(),
          "",
          Optional.empty(),
          "",
          AgentBudgets.DEFAULTS,
          Duration.ofSeconds(120),
          8_000,
          true,
          4_096,
          64,
          16);

  /**
   * Whether a key is set and where it came from, never the key: {@code set (from
   * PYSANDBOX_AGENT_API_KEY)}, {@code set (from agent_api_key_file)} or {@code not set}.
   */
  public String apiKeyStatus() {
    return apiKey.isPresent() ? "set (from " + apiKeySource + ")" : "not set";
  }

  /** Never the key itself. */
  @Override
  public String toString() {
    return "AgentConfig[provider="
        + provider
        + ", baseUrl="
        + baseUrl.map(URI::toString).orElse("")
        + ", model="
        + model
        + ", apiKey="
        + apiKeyStatus()
        + ", budgets="
        + budgets
        + "]";
  }
}

package dev.pysandbox.config;

import dev.pysandbox.api.agent.AgentBudgets;

/**
 * The configuration keys of agent runs (issue 26), each with its default and what it means; read
 * into {@link AgentConfig} by {@code AgentSettings}. The budgets' defaults and maxima are {@link
 * AgentBudgets#DEFAULTS} and {@link AgentBudgets#MAXIMA}, so that this table cannot drift from
 * them.
 *
 * <p>The API key is no setting: it comes only from the environment variable {@code
 * PYSANDBOX_AGENT_API_KEY} or the file {@link #API_KEY_FILE} names, never from a flag or a config
 * file, and nothing lists its value.
 */
public enum AgentSetting implements ConfigSetting {
  PROVIDER(
      "agent_provider",
      "sampling",
      "Where agent runs' model comes from: sampling (the MCP client's own model through"
          + " sampling/createMessage; no key on the server), openai (any OpenAI-compatible"
          + " chat-completions API), anthropic or ollama."),
  BASE_URL(
      "agent_base_url",
      "",
      "The provider's API address (http or https, no credentials, no query), e.g. a local vLLM,"
          + " Ollama's OpenAI endpoint or a LiteLLM proxy; empty: the provider's public URL."),
  MODEL(
      "agent_model",
      "",
      "The model an agent run asks for when the call names none; empty: the provider's or the"
          + " MCP client's choice."),
  API_KEY_FILE(
      "agent_api_key_file",
      "",
      "A file holding the provider's API key (absolute path; not a symlink, at most 16 KiB,"
          + " trimmed, outside data_dir); else the key comes from the environment variable"
          + " PYSANDBOX_AGENT_API_KEY, never from --set or a config file. Only whether a key is"
          + " set, and where from, is ever shown."),
  REQUEST_TIMEOUT("agent_request_timeout", "120", "Seconds one model call may take (1 to 600)."),
  MAX_ITERATIONS(
      "agent_max_iterations",
      String.valueOf(AgentBudgets.DEFAULTS.maxIterations()),
      "Model replies an agent run may have when the call asks for no other number (1 to "
          + AgentBudgets.MAXIMA.maxIterations()
          + ")."),
  TOKEN_BUDGET(
      "agent_token_budget",
      String.valueOf(AgentBudgets.DEFAULTS.tokenBudget()),
      "Tokens (prompt plus completion, sub-calls included) an agent run may spend when the call"
          + " asks for no other budget (1 to "
          + AgentBudgets.MAXIMA.tokenBudget()
          + ")."),
  TIME_BUDGET(
      "agent_time_budget",
      String.valueOf(AgentBudgets.DEFAULTS.timeBudgetSeconds()),
      "Seconds an agent run may take, model calls and code runs included, when the call asks for"
          + " no other budget (1 to "
          + AgentBudgets.MAXIMA.timeBudgetSeconds()
          + ")."),
  MAX_SUBCALLS(
      "agent_max_subcalls",
      String.valueOf(AgentBudgets.DEFAULTS.maxSubcalls()),
      "llm_query calls an agent run's code may make when the call asks for no other number (0 to "
          + AgentBudgets.MAXIMA.maxSubcalls()
          + ")."),
  MAX_DEPTH(
      "agent_max_depth",
      String.valueOf(AgentBudgets.DEFAULTS.maxDepth()),
      "How deep llm_query may nest when the call asks for no other depth (1 to "
          + AgentBudgets.MAXIMA.maxDepth()
          + ")."),
  OBSERVATION_CHARS(
      "agent_observation_chars",
      "8000",
      "Most characters of a code run's output (head and tail) given back to the model (500 to"
          + " 100000)."),
  RECORD_CONTENT(
      "agent_record_content",
      "true",
      "Keep the prompts sent and the replies received with each step of an agent run; false:"
          + " the steps are kept without them."),
  MAX_TOKENS("agent_max_tokens", "4096", "Most tokens one model reply may have (16 to 65536)."),
  MAX_CONCURRENT(
      "agent_max_concurrent", "64", "Agent runs running at once on this server (1 to 1024)."),
  MAX_CONCURRENT_PER_TENANT(
      "agent_max_concurrent_per_tenant",
      "16",
      "Agent runs one tenant may have running at once (1 to 1024; at most"
          + " agent_max_concurrent).");

  private final String key;
  private final String defaultValue;
  private final String doc;

  AgentSetting(String key, String defaultValue, String doc) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.doc = doc;
  }

  @Override
  public String key() {
    return key;
  }

  @Override
  public String defaultValue() {
    return defaultValue;
  }

  @Override
  public String doc() {
    return doc;
  }
}

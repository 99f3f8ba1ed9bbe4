package dev.pysandbox.config;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.agent.AgentBudgets;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads the {@link AgentSetting}s into an {@link AgentConfig}, and the API key from where it may
 * come: the environment variable {@code PYSANDBOX_AGENT_API_KEY} or the file {@code
 * agent_api_key_file} names ({@link ApiKeyFile}), never both. No message here carries the key.
 */
final class AgentSettings {
  private static final AgentBudgets MAX = AgentBudgets.MAXIMA;

  private AgentSettings() {}

  /**
   * @param envKey the value of {@code PYSANDBOX_AGENT_API_KEY}, or {@code null}; blank is unset
   * @param dataDir {@code data_dir}, which the key file must not lie in
   * @param warn where settings that will not work as they stand are told
   */
  static AgentConfig read(SettingValues v, Path dataDir, String envKey, List<String> warn) {
    String provider = v.oneOf(AgentSetting.PROVIDER, AgentConfig.PROVIDERS.toArray(String[]::new));
    Optional<URI> baseUrl = baseUrl(v);
    String model = v.raw(AgentSetting.MODEL).trim();
    if (model.length() > 256 || !model.matches("\\S*")) {
      throw v.bad(AgentSetting.MODEL, "a model name has no spaces and at most 256 characters");
    }
    String keyFile = v.raw(AgentSetting.API_KEY_FILE).trim();
    boolean fromEnv = envKey != null && !envKey.isBlank();
    if (fromEnv && !keyFile.isEmpty()) {
      throw v.bad(
          AgentSetting.API_KEY_FILE,
          "the key is also in the environment variable "
              + ConfigSources.API_KEY_ENV
              + "; give it in one place only (unset the variable, or this setting)");
    }
    Optional<String> apiKey = Optional.empty();
    String apiKeySource = "";
    if (fromEnv) {
      try {
        apiKey = Optional.of(ApiKeyFile.checked(envKey));
      } catch (IllegalArgumentException e) {
        throw PysandboxException.invalid(
            "environment variable " + ConfigSources.API_KEY_ENV + " is invalid: " + e.getMessage());
      }
      apiKeySource = ConfigSources.API_KEY_ENV;
    } else if (!keyFile.isEmpty()) {
      try {
        apiKey = Optional.of(ApiKeyFile.read(ConfigSources.expandHome(keyFile), dataDir));
      } catch (IllegalArgumentException e) {
        throw v.bad(AgentSetting.API_KEY_FILE, e.getMessage());
      }
      apiKeySource = AgentSetting.API_KEY_FILE.key();
    }
    AgentBudgets budgets =
        new AgentBudgets(
            v.integer(AgentSetting.MAX_ITERATIONS, 1, MAX.maxIterations()),
            v.integer(AgentSetting.TOKEN_BUDGET, 1, (int) MAX.tokenBudget()),
            v.integer(AgentSetting.TIME_BUDGET, 1, MAX.timeBudgetSeconds()),
            v.integer(AgentSetting.MAX_SUBCALLS, 0, MAX.maxSubcalls()),
            v.integer(AgentSetting.MAX_DEPTH, 1, MAX.maxDepth()));
    Duration requestTimeout = Duration.ofSeconds(v.integer(AgentSetting.REQUEST_TIMEOUT, 1, 600));
    int observationChars = v.integer(AgentSetting.OBSERVATION_CHARS, 500, 100_000);
    boolean recordContent = v.bool(AgentSetting.RECORD_CONTENT);
    int maxTokens = v.integer(AgentSetting.MAX_TOKENS, 16, 65_536);
    int maxConcurrent = v.integer(AgentSetting.MAX_CONCURRENT, 1, 1024);
    int perTenant = v.integer(AgentSetting.MAX_CONCURRENT_PER_TENANT, 1, 1024);
    if (perTenant > maxConcurrent) {
      warn.add(
          "agent_max_concurrent_per_tenant "
              + perTenant
              + " is above agent_max_concurrent "
              + maxConcurrent
              + "; using "
              + maxConcurrent);
      perTenant = maxConcurrent;
    }
    if (provider.equals("sampling") && baseUrl.isPresent()) {
      warn.add("agent_base_url is set but agent_provider is sampling, which does not use it");
    }
    if ((provider.equals("openai") || provider.equals("anthropic"))
        && baseUrl.isEmpty()
        && apiKey.isEmpty()) {
      warn.add(
          "agent_provider is "
              + provider
              + " at its public URL with no API key: set "
              + ConfigSources.API_KEY_ENV
              + " or agent_api_key_file, or agent_base_url for a server that needs none");
    }
    return new AgentConfig(
        provider,
        baseUrl,
        model,
        apiKey,
        apiKeySource,
        budgets,
        requestTimeout,
        observationChars,
        recordContent,
        maxTokens,
        maxConcurrent,
        perTenant);
  }

  /**
   * An http or https URL with a host, no credentials, no query or fragment; empty: none. A refused
   * value is not repeated in the error: it may hold a key.
   */
  private static Optional<URI> baseUrl(SettingValues v) {
    String value = v.raw(AgentSetting.BASE_URL).trim();
    if (value.isEmpty()) {
      return Optional.empty();
    }
    URI u;
    try {
      u = new URI(value);
    } catch (URISyntaxException e) {
      throw v.badUnshown(AgentSetting.BASE_URL, "not a URL");
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") || u.getHost() == null) {
      throw v.badUnshown(AgentSetting.BASE_URL, "must be an http or https URL with a host");
    }
    if (u.getRawUserInfo() != null) {
      throw v.badUnshown(
          AgentSetting.BASE_URL,
          "must not hold credentials: give the key in "
              + ConfigSources.API_KEY_ENV
              + " or agent_api_key_file");
    }
    if (u.getRawQuery() != null || u.getRawFragment() != null) {
      throw v.badUnshown(AgentSetting.BASE_URL, "must have no query or fragment");
    }
    return Optional.of(u);
  }
}

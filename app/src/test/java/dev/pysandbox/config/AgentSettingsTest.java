package dev.pysandbox.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.agent.AgentBudgets;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The settings of agent runs (issue 26): defaults, each source, ranges, the provider and its URL,
 * and the API key, which comes only from the environment or a key file and is never shown.
 */
@Fast
class AgentSettingsTest {
  /** Recognisable, so that any listing or message that carried it would be caught. */
  static final String KEY = "sk-test-RECOGNISABLE-4f1c9a7e";

  @TempDir Path dir;
  Path dataDir;
  Path outside;

  @BeforeEach
  void directories() throws Exception {
    dataDir = Files.createDirectories(dir.resolve("data"));
    outside = Files.createDirectories(dir.resolve("elsewhere"));
  }

  private PysandboxConfig load(Map<String, String> env, String... keyValues) {
    Map<String, String> flags = new HashMap<>();
    flags.put("data_dir", dataDir.toString());
    for (int i = 0; i < keyValues.length; i += 2) {
      flags.put(keyValues[i], keyValues[i + 1]);
    }
    return PysandboxConfig.load(flags, env, null);
  }

  private PysandboxConfig load(String... keyValues) {
    return load(Map.of(), keyValues);
  }

  private Path keyFile(String content) throws Exception {
    Path f = outside.resolve("agent.key");
    Files.writeString(f, content);
    return f;
  }

  @Test
  void defaults_areAgentConfigDefaults_andListedByDescribe() {
    PysandboxConfig c = load();
    assertThat(c.agent()).isEqualTo(AgentConfig.DEFAULTS);
    assertThat(c.agent().provider()).isEqualTo("sampling");
    assertThat(c.agent().budgets()).isEqualTo(AgentBudgets.DEFAULTS);
    assertThat(c.agent().requestTimeout()).isEqualTo(Duration.ofSeconds(120));
    assertThat(c.agent().apiKeyStatus()).isEqualTo("not set");
    for (AgentSetting s : AgentSetting.values()) {
      assertThat(c.describe()).containsKey(s.key());
      assertThat(c.describe().get(s.key()).source()).isEqualTo("default");
      assertThat(c.describe().get(s.key()).value()).isEqualTo(s.defaultValue());
    }
    assertThat(c.warnings()).isEmpty();
  }

  @Test
  void eachSource_setsAValue_flagOverEnvironmentOverFile() throws Exception {
    Files.writeString(
        dataDir.resolve("config.properties"),
        "agent_max_iterations=30\nagent_model=from-file\nagent_token_budget=9000\n");
    PysandboxConfig c =
        load(
            Map.of(
                "PYSANDBOX_AGENT_MODEL", "from-env",
                "PYSANDBOX_AGENT_TOKEN_BUDGET", "12000",
                "PYSANDBOX_AGENT_PROVIDER", "ollama"),
            "agent_token_budget",
            "15000",
            "agent_record_content",
            "false");
    AgentConfig a = c.agent();
    assertThat(a.budgets().maxIterations()).isEqualTo(30);
    assertThat(a.model()).isEqualTo("from-env");
    assertThat(a.budgets().tokenBudget()).isEqualTo(15_000);
    assertThat(a.provider()).isEqualTo("ollama");
    assertThat(a.recordContent()).isFalse();
    assertThat(c.describe().get("agent_max_iterations").source()).startsWith("file ");
    assertThat(c.describe().get("agent_model").source()).isEqualTo("env PYSANDBOX_AGENT_MODEL");
    assertThat(c.describe().get("agent_token_budget").source()).isEqualTo("flag");
  }

  @Test
  void everyNumber_isReadWithinItsRange() {
    AgentConfig a =
        load(
                "agent_provider", "openai",
                "agent_base_url", "http://127.0.0.1:8000/v1",
                "agent_request_timeout", "600",
                "agent_max_iterations", "200",
                "agent_token_budget", "2000000",
                "agent_time_budget", "3600",
                "agent_max_subcalls", "0",
                "agent_max_depth", "8",
                "agent_observation_chars", "500",
                "agent_max_tokens", "65536",
                "agent_max_concurrent", "1024",
                "agent_max_concurrent_per_tenant", "1024")
            .agent();
    assertThat(a.budgets()).isEqualTo(AgentBudgets.MAXIMA.with(null, null, null, 0, null));
    assertThat(a.requestTimeout()).isEqualTo(Duration.ofSeconds(600));
    assertThat(a.observationChars()).isEqualTo(500);
    assertThat(a.maxTokens()).isEqualTo(65_536);
    assertThat(a.maxConcurrent()).isEqualTo(1024);
    assertThat(a.maxConcurrentPerTenant()).isEqualTo(1024);
    assertThat(a.baseUrl()).contains(URI.create("http://127.0.0.1:8000/v1"));
  }

  @Test
  void outOfRangeValues_areRefusedNamingTheSettingAndItsRange() {
    String[][] cases = {
      {"agent_request_timeout", "0", "between 1 and 600"},
      {"agent_request_timeout", "601", "between 1 and 600"},
      {"agent_max_iterations", "201", "between 1 and 200"},
      {"agent_max_iterations", "0", "between 1 and 200"},
      {"agent_token_budget", "2000001", "between 1 and 2000000"},
      {"agent_time_budget", "3601", "between 1 and 3600"},
      {"agent_max_subcalls", "-1", "between 0 and 500"},
      {"agent_max_subcalls", "501", "between 0 and 500"},
      {"agent_max_depth", "9", "between 1 and 8"},
      {"agent_observation_chars", "499", "between 500 and 100000"},
      {"agent_observation_chars", "100001", "between 500 and 100000"},
      {"agent_max_tokens", "15", "between 16 and 65536"},
      {"agent_max_tokens", "65537", "between 16 and 65536"},
      {"agent_max_concurrent", "0", "between 1 and 1024"},
      {"agent_max_concurrent_per_tenant", "1025", "between 1 and 1024"},
      {"agent_max_iterations", "many", "not a whole number"},
      {"agent_record_content", "maybe", "true or false"},
    };
    for (String[] c : cases) {
      assertThatThrownBy(() -> load(c[0], c[1]))
          .as(c[0] + "=" + c[1])
          .isInstanceOf(PysandboxException.class)
          .hasMessageContaining("setting " + c[0] + " = '" + c[1] + "' (from flag)")
          .hasMessageContaining(c[2]);
    }
  }

  @Test
  void perTenantAboveTheServerWide_isClampedWithAWarning() {
    PysandboxConfig c = load("agent_max_concurrent", "4", "agent_max_concurrent_per_tenant", "10");
    assertThat(c.agent().maxConcurrentPerTenant()).isEqualTo(4);
    assertThat(c.warnings())
        .singleElement()
        .asString()
        .contains("agent_max_concurrent_per_tenant 10")
        .contains("using 4");
  }

  @Test
  void aBadProvider_isRefusedNamingTheChoices() {
    assertThatThrownBy(() -> load("agent_provider", "gemini"))
        .hasMessageContaining("agent_provider")
        .hasMessageContaining("'gemini'")
        .hasMessageContaining("sampling, openai, anthropic, ollama");
    assertThatThrownBy(() -> load("agent_model", "gpt 4"))
        .hasMessageContaining("agent_model")
        .hasMessageContaining("no spaces");
  }

  @Test
  void aBadBaseUrl_isRefusedNamingTheSetting_withoutRepeatingAValueThatMayHoldASecret() {
    String[][] cases = {
      {"ftp://models.example/v1", "http or https"},
      {"/v1/chat", "http or https"},
      {"http://", "not a URL"},
      {"https://user:" + KEY + "@models.example/v1", "credentials"},
      {"https://models.example/v1?api_key=" + KEY, "no query"},
      {"https://models.example/v1#" + KEY, "no query or fragment"},
    };
    for (String[] c : cases) {
      assertThatThrownBy(() -> load("agent_provider", "openai", "agent_base_url", c[0]))
          .as(c[0])
          .hasMessageContaining("agent_base_url")
          .hasMessageContaining(c[1])
          .hasMessageNotContaining(KEY);
    }
    assertThat(load("agent_base_url", "https://llm.internal:4000").warnings())
        .singleElement()
        .asString()
        .contains("agent_provider is sampling");
  }

  @Test
  void theKey_fromTheEnvironment_isHeldAndSaidToComeFromThere() {
    AgentConfig a =
        load(Map.of("PYSANDBOX_AGENT_API_KEY", "  " + KEY + "\n"), "agent_provider", "openai")
            .agent();
    assertThat(a.apiKey()).contains(KEY);
    assertThat(a.apiKeySource()).isEqualTo("PYSANDBOX_AGENT_API_KEY");
    assertThat(a.apiKeyStatus()).isEqualTo("set (from PYSANDBOX_AGENT_API_KEY)");
    assertThat(load(Map.of("PYSANDBOX_AGENT_API_KEY", " ")).agent().apiKey()).isEmpty();
  }

  @Test
  void theKey_fromAFile_isTrimmedAndSaidToComeFromTheSetting() throws Exception {
    Path f = keyFile("\n" + KEY + "\n");
    AgentConfig a = load("agent_api_key_file", f.toString()).agent();
    assertThat(a.apiKey()).contains(KEY);
    assertThat(a.apiKeySource()).isEqualTo("agent_api_key_file");
    assertThat(a.apiKeyStatus()).isEqualTo("set (from agent_api_key_file)");
  }

  @Test
  void theKey_inBothPlaces_isRefused() throws Exception {
    Path f = keyFile(KEY);
    assertThatThrownBy(
            () -> load(Map.of("PYSANDBOX_AGENT_API_KEY", KEY), "agent_api_key_file", f.toString()))
        .hasMessageContaining("agent_api_key_file")
        .hasMessageContaining("PYSANDBOX_AGENT_API_KEY")
        .hasMessageContaining("one place only")
        .hasMessageNotContaining(KEY);
  }

  @Test
  void theKey_asAFlagOrInAPropertiesFile_isRefusedSayingWhereAKeyMayComeFrom() throws Exception {
    assertThatThrownBy(() -> load("agent_api_key", KEY))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("agent_api_key cannot be given as a flag")
        .hasMessageContaining("PYSANDBOX_AGENT_API_KEY")
        .hasMessageContaining("agent_api_key_file")
        .hasMessageNotContaining(KEY);
    Files.writeString(dataDir.resolve("config.properties"), "agent_api_key=" + KEY + "\n");
    assertThatThrownBy(() -> load())
        .hasMessageContaining("agent_api_key cannot be given in ")
        .hasMessageContaining("config.properties")
        .hasMessageContaining("PYSANDBOX_AGENT_API_KEY")
        .hasMessageNotContaining(KEY);
  }

  @Test
  void aSymlinkedKeyFile_isRefused() throws Exception {
    Path real = keyFile(KEY);
    Path link = Files.createSymbolicLink(outside.resolve("link.key"), real);
    assertThatThrownBy(() -> load("agent_api_key_file", link.toString()))
        .hasMessageContaining("setting agent_api_key_file")
        .hasMessageContaining("symbolic link")
        .hasMessageNotContaining(KEY);
  }

  @Test
  void aKeyFileInsideTheDataDirectory_isRefused_alsoThroughALinkedDirectory() throws Exception {
    Path inside = Files.createDirectories(dataDir.resolve("sessions/s-1"));
    Path f = Files.writeString(inside.resolve("agent.key"), KEY);
    assertThatThrownBy(() -> load("agent_api_key_file", f.toString()))
        .hasMessageContaining("agent_api_key_file")
        .hasMessageContaining("inside data_dir")
        .hasMessageNotContaining(KEY);
    Path viaLink = Files.createSymbolicLink(outside.resolve("into-data"), inside);
    assertThatThrownBy(() -> load("agent_api_key_file", viaLink.resolve("agent.key").toString()))
        .hasMessageContaining("inside data_dir");
  }

  @Test
  void anUnusableKeyFile_isAStartupErrorNamingTheSetting() throws Exception {
    assertThatThrownBy(() -> load("agent_api_key_file", outside.resolve("none.key").toString()))
        .hasMessageContaining("setting agent_api_key_file")
        .hasMessageContaining("no such file");
    assertThatThrownBy(() -> load("agent_api_key_file", "agent.key"))
        .hasMessageContaining("absolute path");
    assertThatThrownBy(() -> load("agent_api_key_file", outside.toString()))
        .hasMessageContaining("not a regular file");
    Path big = keyFile("k".repeat(16 * 1024 + 1));
    assertThatThrownBy(() -> load("agent_api_key_file", big.toString()))
        .hasMessageContaining("larger than 16 KiB");
    Path empty = keyFile(" \n");
    assertThatThrownBy(() -> load("agent_api_key_file", empty.toString()))
        .hasMessageContaining("empty");
    Path twoLines = keyFile(KEY + "\nsecond line\n");
    assertThatThrownBy(() -> load("agent_api_key_file", twoLines.toString()))
        .hasMessageContaining("one line")
        .hasMessageNotContaining(KEY);
    Path locked = keyFile(KEY);
    Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("---------"));
    if (!Files.isReadable(locked)) { // root reads it anyway
      assertThatThrownBy(() -> load("agent_api_key_file", locked.toString()))
          .hasMessageContaining("setting agent_api_key_file")
          .hasMessageContaining("permission denied");
    }
  }

  @Test
  void theKey_isNeverInDescribeOrToString() throws Exception {
    PysandboxConfig fromEnv = load(Map.of("PYSANDBOX_AGENT_API_KEY", KEY));
    PysandboxConfig fromFile = load("agent_api_key_file", keyFile(KEY).toString());
    for (PysandboxConfig c : new PysandboxConfig[] {fromEnv, fromFile}) {
      assertThat(c.agent().apiKey()).isEqualTo(Optional.of(KEY));
      assertThat(c.describe().toString()).doesNotContain(KEY);
      assertThat(c.resolved().toString()).doesNotContain(KEY);
      assertThat(c.agent().toString()).doesNotContain(KEY).contains("apiKey=set (from ");
      assertThat(c.toString()).doesNotContain(KEY);
      assertThat(String.join("\n", c.warnings())).doesNotContain(KEY);
    }
  }
}

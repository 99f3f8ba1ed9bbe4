package dev.pysandbox.agent;

import static dev.pysandbox.agent.ModelProvidersWireTest.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.pysandbox.Fast;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.models.ModelClients;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link ModelClients#create}: which provider needs what, and the assembly's choice. */
@Fast
class ModelClientsTest {
  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void create_withoutKey_isInvalidArgumentNamingWhereTheKeyComesFrom(String provider) {
    PysandboxException e =
        catchThrowableOfType(
            PysandboxException.class,
            () -> ModelClients.create(config(provider, "http://127.0.0.1:9/v1", null)));

    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .contains(provider)
        .contains("PYSANDBOX_AGENT_API_KEY")
        .contains("agent_api_key_file");
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic", "ollama"})
  void create_namesItsProviderAndModel_andSupportsTools(String provider) {
    ModelClient client =
        ModelClients.create(
            config(provider, "http://127.0.0.1:9/v1", provider.equals("ollama") ? null : "k-123"));

    assertThat(client.provider()).isEqualTo(provider);
    assertThat(client.defaultModel()).isEqualTo("scripted-model");
    assertThat(client.supportsTools()).isTrue();
  }

  @Test
  void create_sampling_isNotAProviderOfThisModule() {
    PysandboxException e =
        catchThrowableOfType(
            PysandboxException.class,
            () -> ModelClients.create(config("sampling", "http://127.0.0.1:9/v1", null)));

    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }

  @Test
  void assembly_model_isNullForSampling_theDefault() {
    assertThat(Assembly.PARTS.model(PysandboxConfig.defaults())).isNull();
  }
}

package dev.pysandbox.core.agents;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.agent.ScriptedModelServer;
import dev.pysandbox.agent.ScriptedReply;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunRequest;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agent runs whose model is a provider the settings name (agent_provider openai or anthropic),
 * through LangChain4j over a real HTTP wire to a scripted server on loopback: tool calls with their
 * results sent back, usage from the provider, 429 with Retry-After, 5xx past the retries, a
 * malformed body, a cancel in flight, and the key in no record.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class AgentProviderTest {
  static final String KEY = "sk-test-KEY-4f1b2c3d9e8a7b6c5d4e";

  @TempDir Path dataDir;
  @TempDir Path keyDir;
  ScriptedModelServer model;
  DefaultSandboxService service;

  private DefaultSandboxService start(String provider) throws IOException {
    model = new ScriptedModelServer();
    Path keyFile = keyDir.resolve("key");
    Files.writeString(keyFile, KEY + "\n");
    service =
        TestServices.start(
            dataDir,
            Map.of(
                "agent_provider",
                provider,
                "agent_base_url",
                model.baseUrl(),
                "agent_model",
                "scripted-model",
                "agent_api_key_file",
                keyFile.toString()));
    return service;
  }

  @AfterEach
  void stop() {
    if (service != null) {
      service.close();
    }
    if (model != null) {
      model.close();
    }
  }

  private AgentRunInfo run(AgentRunRequest r) throws Exception {
    String id = service.agents().start(r, null).agentRunId();
    return Await.until(
        "agent run " + id + " ends",
        Duration.ofSeconds(60),
        () -> service.agents().status(id, 5),
        x -> x.status().finished());
  }

  @Test
  void openAiToolCallsRunTheCodeAndTheResultGoesBackWithTheProvidersUsage() throws Exception {
    start("openai");
    model.enqueue(
        ScriptedReply.toolCall("run_python", "{\"code\": \"print(sum(range(10)))\"}")
            .usage(120, 30),
        ScriptedReply.text("The sum is 45.").usage(200, 10));
    AgentRunInfo r = run(AgentRunRequest.of("sum 0..9"));

    assertThat(r.status()).as(r.stopReason()).isEqualTo(AgentRunStatus.SUCCEEDED);
    assertThat(r.answer()).isEqualTo("The sum is 45.");
    assertThat(r.provider()).isEqualTo("openai");
    assertThat(r.usage().totalTokens()).isEqualTo(360);
    assertThat(r.usage().tokensEstimated()).isFalse();
    JsonNode first = model.request(1).body();
    assertThat(first.path("model").asText()).isEqualTo("scripted-model");
    assertThat(first.path("tools").toString()).contains("run_python");
    assertThat(model.request(1).header("Authorization")).isEqualTo("Bearer " + KEY);
    JsonNode messages = model.request(2).body().path("messages");
    JsonNode last = messages.get(messages.size() - 1);
    assertThat(last.path("role").asText()).isEqualTo("tool");
    assertThat(last.path("content").asText()).contains("45");

    assertKeyNowhere(r);
  }

  @Test
  void anthropicWritesCodeInABlockAndAnswers() throws Exception {
    start("anthropic");
    model.enqueue(
        ScriptedReply.text("```python\nprint('from claude', 2 ** 5)\n```").usage(50, 20),
        ScriptedReply.text("32").usage(80, 2));
    AgentRunInfo r = run(AgentRunRequest.of("2**5"));
    assertThat(r.status()).as(r.stopReason()).isEqualTo(AgentRunStatus.SUCCEEDED);
    assertThat(r.answer()).isEqualTo("32");
    assertThat(model.request(1).anthropic()).isTrue();
    assertThat(model.request(2).body().toString()).contains("from claude 32");
    assertKeyNowhere(r);
  }

  @Test
  void aRateLimitIsRetriedAfterWhatTheProviderSaid() throws Exception {
    start("openai");
    model.enqueue(
        ScriptedReply.status(429).retryAfter(1), ScriptedReply.text("fine after all").usage(5, 5));
    AgentRunInfo r = run(AgentRunRequest.of("x"));
    assertThat(r.status()).as(r.stopReason()).isEqualTo(AgentRunStatus.SUCCEEDED);
    assertThat(model.requests()).hasSize(2);
  }

  @Test
  void serverErrorsPastThreeTriesFailWithProviderErrorRetryable() throws Exception {
    start("openai");
    model.fallback(n -> ScriptedReply.status(500).message("upstream broke"));
    AgentRunInfo r = run(AgentRunRequest.of("x"));
    assertThat(r.status()).isEqualTo(AgentRunStatus.FAILED);
    assertThat(r.errorCode()).isEqualTo("provider_error");
    assertThat(r.retryable()).isTrue();
    assertThat(r.stopReason()).contains("3 tries");
    assertThat(model.requests()).hasSize(3);
    assertKeyNowhere(r);
  }

  @Test
  void aMalformedAnswerIsToldOnceThenFails() throws Exception {
    start("openai");
    model.enqueue(ScriptedReply.malformed(), ScriptedReply.malformed());
    AgentRunInfo r = run(AgentRunRequest.of("x"));
    assertThat(r.status()).isEqualTo(AgentRunStatus.FAILED);
    assertThat(model.requests()).hasSize(2);
    assertThat(model.request(2).body().toString()).contains("could not be read");
  }

  @Test
  void cancelDuringAProviderCallEndsTheExchange() throws Exception {
    start("openai");
    model.enqueue(ScriptedReply.hang());
    String id = service.agents().start(AgentRunRequest.of("hang"), null).agentRunId();
    assertThat(model.awaitRequests(1, Duration.ofSeconds(30))).isTrue();
    assertThat(service.agents().cancel(id).cancelled()).isTrue();
    assertThat(service.agents().status(id, 0).status()).isEqualTo(AgentRunStatus.CANCELLED);
    assertThat(model.awaitAborted(Duration.ofSeconds(10))).isTrue();
  }

  @Test
  void aCallMayNameAnotherModel() throws Exception {
    start("openai");
    model.enqueue(ScriptedReply.text("ok").usage(1, 1));
    run(
        new AgentRunRequest(
            "x", null, "other-model", null, null, null, null, null, null, List.of(), 0));
    assertThat(model.request(1).body().path("model").asText()).isEqualTo("other-model");
  }

  /** The key in no answer, record, trajectory, notebook or log file of the data directory. */
  private void assertKeyNowhere(AgentRunInfo r) throws Exception {
    assertThat(Json.write(r)).doesNotContain(KEY);
    assertThat(service.agents().status(r.agentRunId(), 0).toString()).doesNotContain(KEY);
    Await.until(
        "the notebook",
        () ->
            Files.exists(
                dataDir.resolve("agent-runs").resolve(r.agentRunId()).resolve("notebook.ipynb")),
        x -> x);
    try (Stream<Path> files = Files.walk(dataDir)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        byte[] bytes;
        try {
          bytes = Files.readAllBytes(f);
        } catch (java.nio.file.NoSuchFileException gone) {
          continue; // a temporary file, renamed as it was written
        }
        assertThat(new String(bytes, StandardCharsets.ISO_8859_1))
            .as(f.toString())
            .doesNotContain(KEY);
      }
    }
  }
}

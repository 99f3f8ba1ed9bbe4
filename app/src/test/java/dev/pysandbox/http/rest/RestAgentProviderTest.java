package dev.pysandbox.http.rest;

import static dev.pysandbox.http.rest.RestTestServer.JSON;
import static dev.pysandbox.http.rest.RestTestServer.tree;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.agent.ScriptedModelServer;
import dev.pysandbox.agent.ScriptedReply;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /api/v1/agent-runs} end to end: a REST caller lends no model, so the server's
 * agent_provider is openai, pointed at an OpenAI-compatible server scripted on loopback (a real
 * wire through LangChain4j). Real Jetty, real core, real sandboxes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class RestAgentProviderTest {
  @TempDir static Path dataDir;
  @TempDir static Path keyDir;
  static ScriptedModelServer model;
  static DefaultSandboxService service;
  static RestTestServer http;

  @BeforeAll
  static void start() throws Exception {
    model = new ScriptedModelServer();
    Path key = keyDir.resolve("key");
    Files.writeString(key, "sk-rest-test-key\n");
    Map<String, String> settings =
        Map.of(
            "agent_provider",
            "openai",
            "agent_base_url",
            model.baseUrl(),
            "agent_model",
            "scripted-model",
            "agent_api_key_file",
            key.toString());
    PysandboxConfig config = TestServices.config(dataDir, settings);
    service = TestServices.start(dataDir, settings);
    http = RestTestServer.start(RestServlet.of(service, config));
  }

  @AfterAll
  static void stop() {
    http.close();
    service.close();
    model.close();
  }

  @Test
  void postAgentRuns_answers201WithItsLocation_andWaitsForItsEndWhenAsked() throws Exception {
    model.enqueue(
        ScriptedReply.toolCall("run_python", "{\"code\": \"print(sum(range(10)))\"}")
            .usage(120, 30),
        ScriptedReply.text("The sum is 45.").usage(200, 10));
    HttpResponse<String> r =
        http.json(
            "POST",
            "/agent-runs",
            "{\"task\": \"sum 0..9\", \"wait_seconds\": 30, \"max_iterations\": 4}");

    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    JsonNode run = tree(r);
    String id = run.path("agent_run_id").asText();
    assertThat(id).matches("agr_[0-9a-f]{16}");
    assertThat(r.headers().firstValue("Location")).hasValue("/api/v1/agent-runs/" + id);
    assertThat(run.path("status").asText()).isEqualTo("succeeded");
    assertThat(run.path("answer").asText()).isEqualTo("The sum is 45.");
    assertThat(run.path("provider").asText()).isEqualTo("openai");
    assertThat(run.path("usage").path("total_tokens").asLong()).isEqualTo(360);
    assertThat(run.toString()).doesNotContain("sk-rest-test-key");
    JsonNode again = tree(http.get("/agent-runs/" + id));
    assertThat(again.path("steps")).hasSize(run.path("steps").size());
  }

  @Test
  void cancelOverRest_stopsTheModelCallInFlight_andTheEventStreamEndsWithDone() throws Exception {
    model.fallback(n -> ScriptedReply.hang());
    try {
      int before = model.requests().size();
      HttpResponse<String> r = http.json("POST", "/agent-runs", "{\"task\": \"think hard\"}");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
      assertThat(tree(r).path("status").asText()).isEqualTo("running");
      String id = tree(r).path("agent_run_id").asText();
      assertThat(model.awaitRequests(before + 1, Duration.ofSeconds(60))).isTrue();

      HttpResponse<Stream<String>> events =
          http.client.send(
              http.request("/agent-runs/" + id + "/events").GET().build(),
              HttpResponse.BodyHandlers.ofLines());
      assertThat(events.statusCode()).isEqualTo(200);
      HttpResponse<String> cancel = http.json("POST", "/agent-runs/" + id + "/cancel", "{}");
      assertThat(tree(cancel).path("cancelled").asBoolean()).as(cancel.body()).isTrue();

      List<JsonNode> lines = new ArrayList<>();
      try (Stream<String> s = events.body()) {
        for (String l : (Iterable<String>) s::iterator) {
          lines.add(JSON.readTree(l));
        }
      }
      JsonNode done = lines.get(lines.size() - 1);
      assertThat(done.path("type").asText()).isEqualTo("done");
      assertThat(done.path("run").path("status").asText()).isEqualTo("cancelled");
      assertThat(model.awaitAborted(Duration.ofSeconds(30)))
          .as("the model call in flight is abandoned: its exchange closed")
          .isTrue();
    } finally {
      model.fallback(n -> ScriptedReply.text("done"));
      model.release();
    }
  }
}

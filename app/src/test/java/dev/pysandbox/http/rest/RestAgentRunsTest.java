package dev.pysandbox.http.rest;

import static dev.pysandbox.http.rest.RestRoutesTest.assertError;
import static dev.pysandbox.http.rest.RestTestServer.JSON;
import static dev.pysandbox.http.rest.RestTestServer.tree;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunRequest;
import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.api.agent.ModelException;
import dev.pysandbox.api.agent.ModelReply;
import dev.pysandbox.api.agent.ModelRequest;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent-run routes over real HTTP (Jetty, java.net.http) against the real core with real
 * sandboxes: the refusals (a malformed id, an unknown one, another tenant's, no task, no model for
 * a REST caller under sampling) and, for agent runs started in the core with a model scripted in
 * the JVM (REST lends none), reading, listing, waiting, cancelling and following their events as
 * NDJSON and SSE, resumed after an event.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class RestAgentRunsTest {
  static final String NDJSON = "application/x-ndjson";
  static final String SSE = "text/event-stream";
  static final String UNKNOWN = "agr_0000000000000000";

  @TempDir static Path dataDir;
  static DefaultSandboxService service;
  static RestTestServer http;

  @BeforeAll
  static void start() throws Exception {
    Map<String, String> settings = Map.of("max_sessions", "20");
    PysandboxConfig config = TestServices.config(dataDir, settings);
    service = TestServices.start(dataDir, settings);
    http = RestTestServer.start(RestServlet.of(service, config));
  }

  @AfterAll
  static void stop() {
    http.close();
    service.close();
  }

  /** A model in the JVM: scripted replies, then {@code fallback}. */
  static final class Model implements ModelClient {
    final LinkedBlockingDeque<Function<ModelRequest, ModelReply>> script =
        new LinkedBlockingDeque<>();
    final CountDownLatch asked = new CountDownLatch(1);
    volatile Function<ModelRequest, ModelReply> fallback = r -> text("done");

    Model then(String reply) {
      script.add(r -> text(reply));
      return this;
    }

    static ModelReply text(String text) {
      return new ModelReply(text, List.of(), 100, 20, "scripted-1");
    }

    /** A model call in flight until its thread is interrupted (a cancel). */
    static ModelReply hang(ModelRequest r) {
      try {
        Thread.sleep(Long.MAX_VALUE);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      throw new ModelException(ModelException.Kind.UNAVAILABLE, "interrupted");
    }

    @Override
    public ModelReply complete(ModelRequest request) {
      asked.countDown();
      Function<ModelRequest, ModelReply> next = script.poll();
      return (next == null ? fallback : next).apply(request);
    }

    @Override
    public String provider() {
      return "sampling";
    }
  }

  /** An agent run of the tenant local: code printing 42, then the answer. */
  static String codeThenAnswer() {
    Model m =
        new Model()
            .then("Computing.\n```python\nprint('value', 6 * 7)\n```")
            .then("The answer is 42.");
    return service.agents().start(AgentRunRequest.of("what is 6*7?"), m).agentRunId();
  }

  static JsonNode finished(String id) throws Exception {
    return Await.untilChecked(
        "agent run " + id + " ends",
        Duration.ofSeconds(60),
        () -> tree(http.get("/agent-runs/" + id + "?wait_seconds=5")),
        r -> !r.path("status").asText().equals("running"));
  }

  static HttpResponse<Stream<String>> events(String id, String accept, String query)
      throws Exception {
    return http.client.send(
        http.request("/agent-runs/" + id + "/events" + query)
            .header("Accept", accept)
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofLines());
  }

  static List<JsonNode> ndjson(HttpResponse<Stream<String>> r) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    try (Stream<String> lines = r.body()) {
      for (String l : (Iterable<String>) lines::iterator) {
        out.add(JSON.readTree(l));
      }
    }
    return out;
  }

  static String types(List<JsonNode> events) {
    return String.join(",", events.stream().map(e -> e.path("type").asText()).toList());
  }

  @Test
  void malformedId_is400_unknownId_is404_onEveryRoute() throws Exception {
    assertError(http.get("/agent-runs/bad%20id"), 400, "invalid_argument");
    assertError(http.get("/agent-runs/" + "a".repeat(65)), 400, "invalid_argument");
    assertError(http.get("/agent-runs/" + UNKNOWN), 404, "not_found");
    assertError(http.json("POST", "/agent-runs/" + UNKNOWN + "/cancel", null), 404, "not_found");
    assertError(http.get("/agent-runs/" + UNKNOWN + "/events"), 404, "not_found");
    assertError(http.get("/agent-runs?status=sleeping"), 400, "invalid_argument");
    assertError(http.get("/agent-runs/" + UNKNOWN + "?wait_seconds=61"), 400, "invalid_argument");
  }

  @Test
  void postAgentRuns_withoutTask_is400_andUnderSampling_isTheClearInvalidArgument()
      throws Exception {
    HttpResponse<String> noTask = http.json("POST", "/agent-runs", "{\"model\": \"m\"}");
    assertError(noTask, 400, "invalid_argument");
    assertThat(tree(noTask).path("error").path("message").asText()).contains("task");

    HttpResponse<String> noModel = http.json("POST", "/agent-runs", "{\"task\": \"add 1 and 2\"}");
    assertError(noModel, 400, "invalid_argument");
    assertThat(tree(noModel).path("error").path("message").asText())
        .contains("agent_provider")
        .contains("sampling");
  }

  @Test
  void anotherTenantsAgentRun_isNotFound_andNotListed() throws Exception {
    String id = codeThenAnswer();
    finished(id);
    HttpRequest.Builder other =
        http.request("/agent-runs/" + id).setHeader("X-Test-Tenant", "acme").GET();
    assertError(http.send(other), 404, "not_found");
    assertError(
        http.send(
            http.request("/agent-runs/" + id + "/cancel")
                .setHeader("X-Test-Tenant", "acme")
                .POST(HttpRequest.BodyPublishers.noBody())),
        404,
        "not_found");
    assertError(
        http.send(http.request("/agent-runs/" + id + "/events").setHeader("X-Test-Tenant", "acme")),
        404,
        "not_found");
    JsonNode theirs =
        tree(http.send(http.request("/agent-runs").setHeader("X-Test-Tenant", "acme").GET()));
    assertThat(theirs.path("agent_runs")).isEmpty();
  }

  @Test
  void getAndList_showTheAgentRun_withItsStepsAnswerUsageAndBudgets() throws Exception {
    String id = codeThenAnswer();
    JsonNode r = finished(id);
    assertThat(r.path("agent_run_id").asText()).isEqualTo(id);
    assertThat(r.path("status").asText()).isEqualTo("succeeded");
    assertThat(r.path("answer").asText()).isEqualTo("The answer is 42.");
    assertThat(r.path("steps")).hasSize(3);
    JsonNode code = r.path("steps").get(1);
    assertThat(code.path("kind").asText()).isEqualTo("code");
    assertThat(code.path("run_id").asText()).startsWith("run_");
    assertThat(code.path("output").asText()).contains("value 42");
    assertThat(r.path("usage").path("iterations").asInt()).isEqualTo(2);
    assertThat(r.path("budgets").isArray()).isTrue();
    assertThat(r.has("tenant")).as("never on the wire").isFalse();

    JsonNode page = tree(http.get("/agent-runs?status=succeeded&limit=50"));
    JsonNode listed = null;
    for (JsonNode a : page.path("agent_runs")) {
      if (a.path("agent_run_id").asText().equals(id)) {
        listed = a;
      }
    }
    assertThat(listed).as("listed").isNotNull();
    assertThat(listed.path("steps")).as("a listing has no steps").isEmpty();
    assertThat(tree(http.get("/agent-runs?status=cancelled&limit=50")).path("agent_runs"))
        .noneMatch(a -> a.path("agent_run_id").asText().equals(id));
  }

  @Test
  void events_ndjson_replayAFinishedAgentRun_endWithDone_andResumeAfterAnEvent() throws Exception {
    String id = codeThenAnswer();
    finished(id);
    // Its notebook is written once it has left the live runs: from then on it is replayed from the
    // store, every time alike.
    Path notebook = dataDir.resolve("agent-runs").resolve(id).resolve("notebook.ipynb");
    Await.until("the notebook of " + id, () -> Files.exists(notebook), written -> written);
    HttpResponse<Stream<String>> r = events(id, NDJSON, "");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith(NDJSON));
    List<JsonNode> all = ndjson(r);
    assertThat(types(all)).startsWith("step").contains("answer").endsWith("done");
    assertThat(all).extracting(e -> e.path("seq").asLong()).isSorted().doesNotHaveDuplicates();
    JsonNode done = all.get(all.size() - 1);
    assertThat(done.path("run").path("status").asText()).isEqualTo("succeeded");
    assertThat(done.path("run").path("answer").asText()).isEqualTo("The answer is 42.");
    JsonNode answer = all.get(all.size() - 2);
    assertThat(answer.path("answer").asText()).isEqualTo("The answer is 42.");

    long second = all.get(1).path("seq").asLong();
    List<JsonNode> rest = ndjson(events(id, NDJSON, "?after=" + second));
    assertThat(rest).hasSize(all.size() - 2);
    assertThat(rest.get(0).path("seq").asLong()).isGreaterThan(second);

    long last = done.path("seq").asLong();
    HttpResponse<String> nothingLeft =
        http.send(http.request("/agent-runs/" + id + "/events?after=" + last).GET());
    assertThat(nothingLeft.statusCode()).as("the client has done already").isEqualTo(204);
  }

  @Test
  void events_sse_followALiveAgentRun_withIdsAndTypes_andLastEventIdResumes() throws Exception {
    Model m = new Model().then("```python\nprint('first')\n```");
    CountDownLatch release = new CountDownLatch(1);
    m.script.add(
        req -> {
          try {
            release.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return Model.text("All done.");
        });
    String id = service.agents().start(AgentRunRequest.of("print first"), m).agentRunId();

    HttpResponse<Stream<String>> r = events(id, SSE, "");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith(SSE));
    List<String> ids = new ArrayList<>();
    List<String> types = new ArrayList<>();
    HttpResponse<Stream<String>> resumed = null;
    try (Stream<String> lines = r.body()) {
      for (String line : (Iterable<String>) lines::iterator) {
        if (line.startsWith("id: ")) {
          ids.add(line.substring(4));
        } else if (line.startsWith("event: ")) {
          types.add(line.substring(7));
          if (types.size() == 3) {
            // The model step, the code run's start and its step: the agent waits on its model
            // while a second client resumes after the first event.
            resumed =
                http.client.send(
                    http.request("/agent-runs/" + id + "/events")
                        .header("Accept", SSE)
                        .header("Last-Event-ID", ids.get(0))
                        .GET()
                        .build(),
                    HttpResponse.BodyHandlers.ofLines());
            release.countDown();
          }
        }
      }
    }
    assertThat(types).startsWith("step", "run", "step").contains("answer").endsWith("done");
    assertThat(ids).hasSameSizeAs(types);
    assertThat(resumed).isNotNull();
    List<String> after;
    try (Stream<String> lines = resumed.body()) {
      after = lines.filter(l -> l.startsWith("id: ")).map(l -> l.substring(4)).toList();
    }
    assertThat(after).isEqualTo(ids.subList(1, ids.size()));
  }

  @Test
  void cancel_duringAModelCall_endsItCancelled_forGood_andItsEventsEndWithDone() throws Exception {
    Model m = new Model();
    m.fallback = Model::hang;
    String id = service.agents().start(AgentRunRequest.of("never answers"), m).agentRunId();
    assertThat(m.asked.await(60, TimeUnit.SECONDS)).isTrue();

    HttpResponse<Stream<String>> stream = events(id, NDJSON, "");
    HttpResponse<String> cancel = http.json("POST", "/agent-runs/" + id + "/cancel", null);
    assertThat(cancel.statusCode()).as(cancel.body()).isEqualTo(200);
    assertThat(tree(cancel).path("cancelled").asBoolean()).isTrue();
    assertThat(tree(cancel).path("status").asText()).isEqualTo("cancelled");

    List<JsonNode> events = ndjson(stream);
    assertThat(types(events)).endsWith("done");
    assertThat(events.get(events.size() - 1).path("run").path("status").asText())
        .isEqualTo("cancelled");
    assertThat(finished(id).path("status").asText()).isEqualTo("cancelled");
    JsonNode again = tree(http.json("POST", "/agent-runs/" + id + "/cancel", null));
    assertThat(again.path("cancelled").asBoolean()).isFalse();
    assertThat(again.path("status").asText()).isEqualTo("cancelled");
  }

  @Test
  void getWithWaitSeconds_answersWhenTheAgentRunEnds() throws Exception {
    Model m = new Model().then("Nothing to run: 3.");
    AgentRunInfo begun = service.agents().start(AgentRunRequest.of("1+2?"), m);
    JsonNode r = tree(http.get("/agent-runs/" + begun.agentRunId() + "?wait_seconds=30"));
    assertThat(r.path("status").asText()).isEqualTo("succeeded");
    assertThat(r.path("answer").asText()).isEqualTo("Nothing to run: 3.");
  }
}

package dev.pysandbox.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.agent.AgentRunInfo;
import dev.pysandbox.api.agent.AgentRunRequest;
import dev.pysandbox.api.agent.AgentRunStatus;
import dev.pysandbox.api.agent.AgentStep;
import dev.pysandbox.api.agent.AgentStepKind;
import dev.pysandbox.core.DefaultSandboxService;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;

/**
 * Agent runs (issue 26), not a test: the server's own time per agent step with a model that answers
 * at once (an OpenAI-compatible server on loopback, through LangChain4j as in production), next to
 * the run path's own overhead measured in the same run; then 50 agent runs at once, 5 steps each,
 * all checked. {@code BENCH_ONLY=agents scripts/bench.sh}.
 *
 * <p>Per step: from the model's reply leaving the model server to the next request reaching it,
 * minus the code run's recorded duration: the model call's parsing, the loop, the run path to the
 * sandbox and back, the recording, the next request's making and sending.
 */
final class AgentBench {
  private static final ObjectMapper JSON = new ObjectMapper();

  static {
    // The JDK's HTTP server writes a response's headers and body apart; with Nagle on, the body
    // waits for the client's delayed ACK (40 ms). Real providers' servers do not do that.
    System.setProperty("sun.net.httpserver.nodelay", "true");
  }

  private AgentBench() {}

  /** A model that writes {@code steps} code blocks, then answers with what they printed. */
  static final class Model implements AutoCloseable {
    final HttpServer server;
    final int codeSteps;
    final Map<String, Long> replied = new ConcurrentHashMap<>();
    final ConcurrentLinkedQueue<long[]> gaps = new ConcurrentLinkedQueue<>();

    Model(int codeSteps) throws IOException {
      this.codeSteps = codeSteps;
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
      server.setExecutor(Executors.newFixedThreadPool(16));
      server.createContext(
          "/v1/chat/completions",
          x -> {
            long arrived = System.nanoTime();
            JsonNode body = JSON.readTree(x.getRequestBody());
            JsonNode messages = body.path("messages");
            String task = messages.get(1).path("content").asText();
            int outputs = 0;
            String lastOutput = "";
            for (JsonNode m : messages) {
              if (m.path("role").asText().equals("user")
                  && m.path("content").asText().startsWith("Output of your code")) {
                outputs++;
                lastOutput = m.path("content").asText();
              }
            }
            Long before = replied.get(task);
            if (before != null) {
              gaps.add(new long[] {before, arrived, outputs});
            }
            String text =
                outputs < codeSteps
                    ? "```python\nacc = globals().get('acc', 0) + 1\nprint('"
                        + task
                        + "', acc)\n```"
                    : "answer "
                        + task
                        + " "
                        + (lastOutput.contains(task + " " + codeSteps) ? "ok" : "WRONG");
            ObjectNode reply = JSON.createObjectNode();
            reply
                .put("id", "c")
                .put("object", "chat.completion")
                .put("created", 0)
                .put("model", "bench");
            ObjectNode choice = reply.putArray("choices").addObject();
            choice.put("index", 0).put("finish_reason", "stop");
            choice.putObject("message").put("role", "assistant").put("content", text);
            reply
                .putObject("usage")
                .put("prompt_tokens", 10)
                .put("completion_tokens", 10)
                .put("total_tokens", 20);
            byte[] out = JSON.writeValueAsBytes(reply);
            x.getResponseHeaders().add("Content-Type", "application/json");
            x.sendResponseHeaders(200, out.length);
            try (OutputStream o = x.getResponseBody()) {
              o.write(out);
            }
            replied.put(task, System.nanoTime());
          });
      server.start();
    }

    String baseUrl() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  static void run(Path dataDir, int warmCalls) throws Exception {
    System.out.printf("%n== agent runs: server overhead per step, scripted model on loopback ==%n");
    try (Model model = new Model(4)) {
      Path keyFile = Files.createTempFile("bench-key", "");
      Files.writeString(keyFile, "sk-bench");
      DefaultSandboxService s =
          TestServices.start(
              dataDir.resolve("agents"),
              Map.of(
                  "agent_provider", "openai",
                  "agent_base_url", model.baseUrl(),
                  "agent_api_key_file", keyFile.toString(),
                  "agent_max_concurrent_per_tenant", "64",
                  "max_sessions", "80",
                  "max_sessions_per_tenant", "80"));
      try {
        // baseline: the run path alone, warm print(1) in a session, wall minus recorded duration
        String session = s.createSession(null, null).sessionId();
        List<Long> runPath = new ArrayList<>();
        for (int i = 0; i < Math.max(200, warmCalls / 5); i++) {
          long t = System.nanoTime();
          RunRecord r = s.run(new ExecutionRequest("print(1)", session, null, 30));
          long wall = System.nanoTime() - t;
          if (i >= 50) {
            runPath.add(wall - r.durationMs() * 1_000_000L);
          }
        }
        // one agent at a time, 4 code steps each, in one session
        int agents = 30;
        model.gaps.clear();
        List<Long> perStep = new ArrayList<>();
        List<Long> modelCalls = new ArrayList<>();
        for (int i = 0; i < agents; i++) {
          AgentRunInfo a =
              finish(s, s.agents().start(request("solo" + i, session), null).agentRunId());
          Map<Integer, Long> runMs = new java.util.HashMap<>();
          int code = 0;
          for (AgentStep st : a.steps()) {
            if (st.kind() == AgentStepKind.MODEL && i >= 5) {
              modelCalls.add(st.durationMs() * 1_000_000L);
            }
            if (st.kind() == AgentStepKind.CODE) {
              runMs.put(++code, s.getRun(st.runId(), false).durationMs());
            }
          }
          for (long[] g : drain(model, "solo" + i)) {
            if (i >= 5) {
              perStep.add(g[1] - g[0] - runMs.getOrDefault((int) g[2], 0L) * 1_000_000L);
            }
          }
        }
        // the wire alone: the provider client (LangChain4j) and a bare JDK HttpClient, same server
        wire(model, keyFile);
        // the same loop with the model in the JVM (no wire): the server's own time per step
        List<Long> inJvm = inJvmSteps(dataDir.resolve("agents-jvm"));
        print("run path alone (print(1) wall - its duration)", runPath);
        print("agent step, model in the JVM: answer -> next ask, minus the run", inJvm);
        print("agent step: reply sent -> next request, minus the run's duration", perStep);
        print("a model call as the loop timed it (request made -> reply parsed)", modelCalls);

        // 50 at once, 5 steps each (model, code, model, code, model)
        try (Model five = new Model(2)) {
          DefaultSandboxService t =
              TestServices.start(
                  dataDir.resolve("agents-50"),
                  Map.of(
                      "agent_provider", "openai",
                      "agent_base_url", five.baseUrl(),
                      "agent_api_key_file", keyFile.toString(),
                      "agent_max_concurrent_per_tenant", "64",
                      "max_sessions", "80",
                      "max_sessions_per_tenant", "80"));
          try {
            long t0 = System.nanoTime();
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
              ids.add(t.agents().start(request("many" + i, null), null).agentRunId());
            }
            int ok = 0;
            for (int i = 0; i < ids.size(); i++) {
              AgentRunInfo a = finish(t, ids.get(i));
              if (a.status() == AgentRunStatus.SUCCEEDED
                  && a.steps().size() == 5
                  && ("answer many" + i + " ok").equals(a.answer())) {
                ok++;
              } else {
                System.out.println(
                    "  not right: "
                        + a.agentRunId()
                        + " "
                        + a.status()
                        + " "
                        + a.stopReason()
                        + " "
                        + a.answer());
              }
            }
            System.out.printf(
                "50 agent runs at once, 5 steps each: %d/50 correct in %.1f s%n",
                ok, (System.nanoTime() - t0) / 1e9);
          } finally {
            t.close();
          }
        }
      } finally {
        s.close();
      }
    }
  }

  /** One model call through the provider client, and one bare POST, to the same local server. */
  private static void wire(Model model, Path keyFile) throws Exception {
    var config =
        new dev.pysandbox.config.AgentConfig(
            "openai",
            java.util.Optional.of(java.net.URI.create(model.baseUrl())),
            "bench",
            java.util.Optional.of("sk-bench"),
            "bench",
            dev.pysandbox.api.agent.AgentBudgets.DEFAULTS,
            java.time.Duration.ofSeconds(30),
            8000,
            true,
            4096,
            64,
            16);
    dev.pysandbox.api.agent.ModelClient client = dev.pysandbox.models.ModelClients.create(config);
    var request =
        new dev.pysandbox.api.agent.ModelRequest(
            null,
            List.of(
                dev.pysandbox.api.agent.ChatMessage.system("system"),
                dev.pysandbox.api.agent.ChatMessage.user("wire")),
            List.of(),
            100,
            java.time.Duration.ofSeconds(30));
    List<Long> viaClient = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      long t = System.nanoTime();
      client.complete(request);
      if (i >= 100) {
        viaClient.add(System.nanoTime() - t);
      }
    }
    java.net.http.HttpClient http =
        java.net.http.HttpClient.newBuilder()
            .version(java.net.http.HttpClient.Version.HTTP_1_1)
            .build();
    String body =
        "{\"model\":\"bench\",\"messages\":[{\"role\":\"system\",\"content\":\"system\"},"
            + "{\"role\":\"user\",\"content\":\"wire\"}]}";
    List<Long> bare = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      long t = System.nanoTime();
      http.send(
          java.net.http.HttpRequest.newBuilder(
                  java.net.URI.create(model.baseUrl() + "/chat/completions"))
              .header("Content-Type", "application/json")
              .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
              .build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      if (i >= 100) {
        bare.add(System.nanoTime() - t);
      }
    }
    print("model call through the provider client (LangChain4j), loopback", viaClient);
    print("the same POST through a bare JDK HttpClient (baseline)", bare);
  }

  /** Per step, with a model in the JVM: from its answer to the next question, minus the run. */
  private static List<Long> inJvmSteps(Path dir) throws Exception {
    DefaultSandboxService s = TestServices.start(dir, Map.of());
    try {
      String session = s.createSession(null, null).sessionId();
      List<long[]> gaps = new java.util.concurrent.CopyOnWriteArrayList<>();
      long[] last = {0};
      dev.pysandbox.api.agent.ModelClient m =
          new dev.pysandbox.api.agent.ModelClient() {
            @Override
            public dev.pysandbox.api.agent.ModelReply complete(
                dev.pysandbox.api.agent.ModelRequest r) {
              long now = System.nanoTime();
              long outputs =
                  r.messages().stream()
                      .filter(x -> x.text().startsWith("Output of your code"))
                      .count();
              if (outputs > 0) {
                gaps.add(new long[] {last[0], now, outputs});
              }
              String text = outputs < 4 ? "```python\nprint(1)\n```" : "done";
              var reply = new dev.pysandbox.api.agent.ModelReply(text, List.of(), 10, 10, "jvm");
              last[0] = System.nanoTime();
              return reply;
            }

            @Override
            public String provider() {
              return "sampling";
            }
          };
      List<Long> out = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        gaps.clear();
        AgentRunInfo a =
            finishWith(s, s.agents().start(request("jvm" + i, session), m).agentRunId());
        List<Long> runMs = new ArrayList<>();
        for (AgentStep st : a.steps()) {
          if (st.kind() == AgentStepKind.CODE) {
            runMs.add(s.getRun(st.runId(), false).durationMs());
          }
        }
        for (long[] g : gaps) {
          if (i >= 5) {
            out.add(g[1] - g[0] - runMs.get((int) g[2] - 1) * 1_000_000L);
          }
        }
      }
      return out;
    } finally {
      s.close();
    }
  }

  private static AgentRunInfo finishWith(DefaultSandboxService s, String id) {
    return finish(s, id);
  }

  private static AgentRunRequest request(String task, String session) {
    return new AgentRunRequest(task, session, null, 20, null, null, null, 600, null, List.of(), 0);
  }

  private static AgentRunInfo finish(DefaultSandboxService s, String id) {
    AgentRunInfo a = s.agents().status(id, 60);
    while (!a.status().finished()) {
      a = s.agents().status(id, 60);
    }
    return a;
  }

  private static List<long[]> drain(Model m, String task) {
    List<long[]> out = new ArrayList<>(m.gaps);
    m.gaps.clear();
    return out;
  }

  private static void print(String name, List<Long> nanos) {
    long[] a = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
    if (a.length == 0) {
      System.out.printf("%-66s (no samples)%n", name);
      return;
    }
    System.out.printf(
        "%-66s p50 %6.3f ms  p90 %6.3f ms  (n=%d)%n",
        name, a[a.length / 2] / 1e6, a[a.length * 9 / 10] / 1e6, a.length);
  }

  static long[] sorted(List<Long> l) {
    long[] a = l.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(a);
    return a;
  }

  static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}

package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agent runs over MCP with the client's own model (agent_provider sampling, the default): a real
 * server process over stdio and over Streamable HTTP, the MCP SDK's Java client declaring sampling
 * and answering each sampling/createMessage from a script. The client answers, refuses, is slow,
 * goes away; a client without sampling is told which settings to use.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class AgentSamplingIT {
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dataDir;
  @TempDir Path elsewhere;

  private McpSyncClient stdio(
      Function<McpSchema.CreateMessageRequest, McpSchema.CreateMessageResult> model) {
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args("serve", "--data-dir", dataDir.toString())
            .build();
    McpClient.SyncSpec spec =
        McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
            .requestTimeout(Duration.ofSeconds(120));
    if (model != null) {
      spec =
          spec.capabilities(McpSchema.ClientCapabilities.builder().sampling().build())
              .sampling(model);
    }
    McpSyncClient c = spec.build();
    c.initialize();
    return c;
  }

  static McpSchema.CreateMessageResult says(String text) {
    return McpSchema.CreateMessageResult.builder(
            McpSchema.Role.ASSISTANT, McpSchema.TextContent.builder(text).build(), "client-model-1")
        .build();
  }

  static String lastText(McpSchema.CreateMessageRequest r) {
    McpSchema.SamplingMessage m = r.messages().get(r.messages().size() - 1);
    return ((McpSchema.TextContent) m.content()).text();
  }

  /** Let go when a test ends, so that no slow client model holds the client's close. */
  final CountDownLatch release = new CountDownLatch(1);

  @org.junit.jupiter.api.AfterEach
  void letGo() {
    release.countDown();
  }

  /** A client model that takes {@code millis} to answer {@code text} (less once let go). */
  McpSchema.CreateMessageResult slowly(long millis, CountDownLatch asked, String text) {
    asked.countDown();
    try {
      release.await(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return says(text);
  }

  private static CallToolResult call(McpSyncClient c, String tool, Map<String, Object> args) {
    return c.callTool(CallToolRequest.builder(tool).arguments(args).build());
  }

  private static JsonNode ok(McpSyncClient c, String tool, Map<String, Object> args) {
    CallToolResult r = call(c, tool, args);
    JsonNode json = JSON.valueToTree(r.structuredContent());
    assertThat(r.isError()).as("%s: %s", tool, json).isFalse();
    return json;
  }

  @Test
  void theClientsModelWritesCodeReadsItsOutputAndAnswers() {
    List<McpSchema.CreateMessageRequest> asked = new CopyOnWriteArrayList<>();
    List<String> replies =
        new ArrayList<>(
            List.of(
                "```python\nimport sys\nprint('py', sys.version_info[0] * 14)\n```", "It is 42."));
    McpSyncClient c =
        stdio(
            r -> {
              asked.add(r);
              return says(replies.isEmpty() ? "done" : replies.remove(0));
            });
    try {
      JsonNode r = ok(c, "agent_run", Map.of("task", "compute 3*14 in Python", "wait_seconds", 60));
      assertThat(r.path("status").asText()).as(r.toString()).isEqualTo("succeeded");
      assertThat(r.path("agent_run_id").asText()).matches("agr_[0-9a-f]{16}");
      assertThat(r.path("answer").asText()).isEqualTo("It is 42.");
      assertThat(r.path("model").asText()).isEqualTo("client-model-1");
      assertThat(r.path("steps")).hasSize(3);
      assertThat(r.path("steps").get(1).path("run_id").asText()).startsWith("run_");
      assertThat(r.path("usage").path("tokens_estimated").asBoolean()).isTrue();
      assertThat(asked).hasSize(2);
      assertThat(asked.get(0).systemPrompt()).contains("```python");
      assertThat(lastText(asked.get(1))).contains("py 42");

      JsonNode status =
          ok(c, "agent_status", Map.of("agent_run_id", r.path("agent_run_id").asText()));
      assertThat(status.path("status").asText()).isEqualTo("succeeded");
      JsonNode list = ok(c, "list_agent_runs", Map.of());
      assertThat(list.path("agent_runs").get(0).path("agent_run_id").asText())
          .isEqualTo(r.path("agent_run_id").asText());
      JsonNode run =
          ok(c, "get_run", Map.of("run_id", r.path("steps").get(1).path("run_id").asText()));
      assertThat(run.path("stdout").asText()).isEqualTo("py 42\n");
    } finally {
      release.countDown();
      c.closeGracefully();
    }
  }

  @Test
  void aClientThatRefusesFailsTheAgentRunWithProviderError() {
    McpSyncClient c =
        stdio(
            r -> {
              throw new IllegalStateException("the user declined the request");
            });
    try {
      JsonNode r = ok(c, "agent_run", Map.of("task", "anything", "wait_seconds", 60));
      assertThat(r.path("status").asText()).as(r.toString()).isEqualTo("failed");
      assertThat(r.path("error_code").asText()).isEqualTo("provider_error");
      assertThat(r.path("stop_reason").asText()).contains("refused");
    } finally {
      release.countDown();
      c.closeGracefully();
    }
  }

  @Test
  void aSlowClientEndsAtTheTimeBudgetAndTheServerStaysUsable() {
    McpSyncClient c = stdio(r -> slowly(6_000, new CountDownLatch(1), "late"));
    try {
      JsonNode r =
          ok(c, "agent_run", Map.of("task", "slow", "time_budget_seconds", 2, "wait_seconds", 30));
      assertThat(r.path("status").asText()).as(r.toString()).isEqualTo("budget_exhausted");
      assertThat(r.path("stop_reason").asText()).startsWith("time_budget_seconds");
      JsonNode ran = ok(c, "run_python", Map.of("code", "print('alive')"));
      assertThat(ran.path("stdout").asText()).isEqualTo("alive\n");
    } finally {
      release.countDown();
      c.closeGracefully();
    }
  }

  @Test
  void cancelDuringTheClientsModelCallEndsItAtOnce() throws Exception {
    CountDownLatch askedOnce = new CountDownLatch(1);
    McpSyncClient c = stdio(r -> slowly(20_000, askedOnce, "```python\nprint('too late')\n```"));
    try {
      JsonNode r = ok(c, "agent_run", Map.of("task", "wait"));
      String id = r.path("agent_run_id").asText();
      assertThat(askedOnce.await(60, TimeUnit.SECONDS)).isTrue();
      JsonNode cancel = ok(c, "agent_cancel", Map.of("agent_run_id", id));
      assertThat(cancel.path("cancelled").asBoolean()).isTrue();
      assertThat(ok(c, "agent_status", Map.of("agent_run_id", id)).path("status").asText())
          .isEqualTo("cancelled");
    } finally {
      release.countDown();
      c.closeGracefully();
    }
  }

  @Test
  void aClientWithoutSamplingIsToldWhichSettingsToUse() {
    McpSyncClient c = stdio(null);
    try {
      CallToolResult r = call(c, "agent_run", Map.of("task", "x"));
      assertThat(r.isError()).isTrue();
      String text = JSON.valueToTree(r).toString();
      assertThat(text).contains("invalid_argument").contains("agent_provider");
    } finally {
      release.countDown();
      c.closeGracefully();
    }
  }

  @Test
  void aClientThatGoesAwayLeavesItsAgentRunInterruptedNothingLost() throws Exception {
    CountDownLatch askedOnce = new CountDownLatch(1);
    McpSyncClient c = stdio(r -> slowly(60_000, askedOnce, "never"));
    String id;
    try {
      id = ok(c, "agent_run", Map.of("task", "left behind")).path("agent_run_id").asText();
      assertThat(askedOnce.await(60, TimeUnit.SECONDS)).isTrue();
    } finally {
      c.close();
    }
    McpSyncClient again = stdio(r -> says("unused"));
    try {
      JsonNode status =
          dev.pysandbox.Await.until(
              "the agent run is recorded as ended",
              Duration.ofSeconds(30),
              () -> ok(again, "agent_status", Map.of("agent_run_id", id)),
              s -> !s.path("status").asText().equals("running"));
      assertThat(status.path("status").asText()).isEqualTo("interrupted");
      assertThat(status.path("task").asText()).isEqualTo("left behind");
    } finally {
      again.closeGracefully();
    }
  }
}

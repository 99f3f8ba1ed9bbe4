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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Approvals as people and agents meet them, on the real server: the MCP SDK's Java client that
 * declares elicitation answers the server's prompt (accept runs the run in the same call, decline
 * denies it); a client without elicitation gets the held run, cannot approve it itself (no such
 * tool), and a person approves it with {@code pysandbox approvals approve} from another directory;
 * over REST only a key made with {@code --role approver} may decide.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class ApprovalsIT {
  static final ObjectMapper JSON = new ObjectMapper();

  /** Code that reads as a comparison with 'user' but compares with more (bidi overrides). */
  static final String TROJAN_SOURCE =
      "access = 'user'\nif access != 'user\u202e \u2066# admin\u2069 \u2066':\n    print('admin')";

  /** How a person is shown its string: every override escaped. */
  static final String TROJAN_SOURCE_SHOWN = "'user\\u202e \\u2066# admin\\u2069 \\u2066'";

  @TempDir Path dataDir;
  @TempDir Path elsewhere;

  private McpSyncClient client(
      Function<McpSchema.ElicitFormRequest, McpSchema.ElicitResult> prompt, String... settings) {
    List<String> args =
        new java.util.ArrayList<>(List.of("serve", "--data-dir", dataDir.toString()));
    for (String s : settings) {
      args.add("--set");
      args.add(s);
    }
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString()).args(args).build();
    McpClient.SyncSpec spec =
        McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
            .requestTimeout(Duration.ofSeconds(90));
    if (prompt != null) {
      spec =
          spec.capabilities(McpSchema.ClientCapabilities.builder().elicitation().build())
              .elicitation(prompt);
    }
    McpSyncClient c = spec.build();
    c.initialize();
    return c;
  }

  private static JsonNode call(McpSyncClient c, String tool, Map<String, Object> args) {
    CallToolResult r = c.callTool(CallToolRequest.builder(tool).arguments(args).build());
    JsonNode json = JSON.valueToTree(r.structuredContent());
    assertThat(r.isError()).as("%s: %s", tool, json).isFalse();
    return json;
  }

  @Test
  void aClientThatDeclaresElicitation_isAskedWithTheCodeAndFindings_acceptRuns_declineDenies() {
    List<String> prompts = new CopyOnWriteArrayList<>();
    boolean[] accept = {true};
    McpSyncClient c =
        client(
            request -> {
              prompts.add(request.message());
              return accept[0]
                  ? McpSchema.ElicitResult.builder(McpSchema.ElicitResult.Action.ACCEPT)
                      .content(Map.of("reason", "looked at it"))
                      .build()
                  : McpSchema.ElicitResult.builder(McpSchema.ElicitResult.Action.DECLINE).build();
            },
            "approval_policy=always");
    try {
      JsonNode ran = call(c, "run_python", Map.of("code", "print('approved', 6 * 7)"));
      assertThat(ran.path("status").asText()).isEqualTo("succeeded");
      assertThat(ran.path("stdout").asText()).isEqualTo("approved 42\n");
      assertThat(ran.path("approval_id").asText()).startsWith("apr_");
      assertThat(prompts).singleElement().asString().contains("print('approved', 6 * 7)");

      accept[0] = false;
      JsonNode denied = call(c, "run_python", Map.of("code", "print('never')"));
      assertThat(denied.path("status").asText()).isEqualTo("denied");
      assertThat(denied.path("stdout").isNull()).isTrue();
      assertThat(call(c, "list_pending_approvals", Map.of()).path("approvals")).isEmpty();
    } finally {
      c.closeGracefully();
    }
  }

  @Test
  void withoutElicitation_theRunWaits_theAgentCannotApproveIt_aPersonAtTheCommandLineCan()
      throws Exception {
    McpSyncClient c = client(null);
    try {
      assertThat(c.listTools().tools())
          .extracting(McpSchema.Tool::name)
          .contains("list_pending_approvals")
          .doesNotContain("approve_run", "deny_run");
      JsonNode held =
          call(
              c, "run_python", Map.of("code", "print('after approval')", "require_approval", true));
      // With no analyser finding on print(), require_approval alone runs it at once; code the
      // analyser flags waits. Either way the agent never decides.
      if (held.path("status").asText().equals("succeeded")) {
        held =
            call(
                c,
                "run_python",
                Map.of(
                    "code",
                    "import subprocess\nprint('after approval')",
                    "require_approval",
                    true));
      }
      assertThat(held.path("status").asText()).isEqualTo("awaiting_approval");
      String approvalId = held.path("approval_id").asText();
      String runId = held.path("run_id").asText();
      assertThat(held.path("risk_findings").size()).isPositive();
      // What happens next, for the agent to tell its user (issue 23: it was null).
      assertThat(held.path("message").asText())
          .contains("pysandbox approvals approve " + approvalId, "get_run", "wait_seconds");

      org.assertj.core.api.Assertions.assertThatThrownBy(
              () ->
                  c.callTool(
                      CallToolRequest.builder("approve_run")
                          .arguments(Map.of("approval_id", approvalId))
                          .build()))
          .as("no tool for the agent to approve with")
          .hasMessageContaining("unknown tool 'approve_run'");

      JsonNode pending = call(c, "list_pending_approvals", Map.of());
      assertThat(pending.path("approvals").get(0).path("approval_id").asText())
          .isEqualTo(approvalId);

      ServerProcess.Result list =
          ServerProcess.runIn(elsewhere, dataDir, null, "approvals", "list");
      assertThat(list.stdout()).contains(approvalId);
      ServerProcess.Result show =
          ServerProcess.runIn(elsewhere, dataDir, null, "approvals", "show", approvalId);
      assertThat(show.stdout()).contains("print('after approval')").contains("why:");
      ServerProcess.Result approve =
          ServerProcess.runIn(
              elsewhere, dataDir, null, "approvals", "approve", approvalId, "--reason", "fine");
      assertThat(approve.exit()).as(approve.stderr()).isZero();

      JsonNode done = call(c, "get_run", Map.of("run_id", runId, "wait_seconds", 30));
      assertThat(done.path("status").asText()).isIn("succeeded", "failed");
      assertThat(done.path("stdout").asText()).isEqualTo("after approval\n");

      ServerProcess.Result again =
          ServerProcess.runIn(elsewhere, dataDir, null, "approvals", "approve", approvalId);
      assertThat(again.exit()).as("single use").isNotZero();
      assertThat(again.stderr()).contains("already approved");
    } finally {
      c.closeGracefully();
    }
  }

  @Test
  void overRest_onlyAnApproversKeyDecides() throws Exception {
    String agentKey = key("acme", "agent");
    String approverKey = key("acme", "approver");
    try (HttpServerProcess server =
        HttpServerProcess.start(dataDir, elsewhere, "--set", "approval_policy=always")) {
      HttpClient http = HttpClient.newHttpClient();
      URI base = server.uri();
      HttpResponse<String> ran =
          http.send(
              post(base, "/api/v1/runs", agentKey, "{\"code\": \"print('rest')\"}"),
              HttpResponse.BodyHandlers.ofString());
      JsonNode held = JSON.readTree(ran.body());
      assertThat(held.path("status").asText()).as(ran.body()).isEqualTo("awaiting_approval");
      String approvalId = held.path("approval_id").asText();

      HttpResponse<String> listed =
          http.send(
              HttpRequest.newBuilder(base.resolve("/api/v1/approvals"))
                  .header("Authorization", "Bearer " + agentKey)
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(listed.body()).contains(approvalId);

      HttpResponse<String> byAgent =
          http.send(
              post(base, "/api/v1/approvals/" + approvalId + "/approve", agentKey, "{}"),
              HttpResponse.BodyHandlers.ofString());
      assertThat(byAgent.statusCode()).as(byAgent.body()).isEqualTo(403);
      assertThat(JSON.readTree(byAgent.body()).path("error").path("code").asText())
          .isEqualTo("forbidden");

      HttpResponse<String> byApprover =
          http.send(
              post(
                  base,
                  "/api/v1/approvals/" + approvalId + "/approve",
                  approverKey,
                  "{\"reason\": \"reviewed\"}"),
              HttpResponse.BodyHandlers.ofString());
      assertThat(byApprover.statusCode()).as(byApprover.body()).isEqualTo(200);
      HttpResponse<String> done =
          http.send(
              HttpRequest.newBuilder(
                      base.resolve(
                          "/api/v1/runs/" + held.path("run_id").asText() + "?wait_seconds=30"))
                  .header("Authorization", "Bearer " + agentKey)
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(JSON.readTree(done.body()).path("stdout").asText()).isEqualTo("rest\n");
      assertThat(JSON.readTree(done.body()).path("status").asText()).isEqualTo("succeeded");
    }
  }

  /**
   * Issue 24 item 1: an agent's own MCP client over HTTP declared elicitation and answered the
   * approval prompt itself. On a keyed HTTP face the prompt decides nothing by default (the client
   * is not even asked); where the operator allows it, the record says the answer is the client's
   * word, under the name the client gave.
   */
  @Test
  void overMcpHttp_anAgentsClientAnsweringItsOwnPrompt_decidesNothing_unlessTheOperatorAllowsIt()
      throws Exception {
    String agentKey = key("acme", "agent");
    List<String> prompts = new CopyOnWriteArrayList<>();
    Function<McpSchema.ElicitFormRequest, McpSchema.ElicitResult> yes =
        r -> {
          prompts.add(r.message());
          return McpSchema.ElicitResult.builder(McpSchema.ElicitResult.Action.ACCEPT)
              .content(Map.of("reason", "a person said so (really the agent)"))
              .build();
        };
    String heldApproval;
    try (HttpServerProcess server =
        HttpServerProcess.start(dataDir, elsewhere, "--set", "approval_policy=always")) {
      McpSyncClient c = httpClient(server.uri(), agentKey, yes);
      try {
        JsonNode held = call(c, "run_python", Map.of("code", "print('self-approved?')"));
        assertThat(held.path("status").asText()).as(held.toString()).isEqualTo("awaiting_approval");
        assertThat(prompts).as("an HTTP client is not asked by default").isEmpty();
        assertThat(held.path("message").asText()).contains("http_elicitation_approves");
        heldApproval = held.path("approval_id").asText();
      } finally {
        c.closeGracefully();
      }
    }
    ServerProcess.Result stillPending =
        ServerProcess.runIn(elsewhere, dataDir, null, "approvals", "show", heldApproval);
    assertThat(stillPending.stdout()).doesNotContain("decided:");

    try (HttpServerProcess server =
        HttpServerProcess.start(
            dataDir,
            elsewhere,
            "--set",
            "approval_policy=always",
            "--set",
            "http_elicitation_approves=true")) {
      McpSyncClient c = httpClient(server.uri(), agentKey, yes);
      try {
        JsonNode ran = call(c, "run_python", Map.of("code", "print('client-asserted')"));
        assertThat(prompts).hasSize(1);
        assertThat(ran.path("status").asText()).as(ran.toString()).isEqualTo("succeeded");
        assertThat(ran.path("stdout").asText()).isEqualTo("client-asserted\n");
        String approvalId = ran.path("approval_id").asText();
        ServerProcess.Result show =
            ServerProcess.runIn(elsewhere, dataDir, null, "approvals", "show", approvalId);
        assertThat(show.stdout())
            .contains("elicitation (client-asserted): self-approver")
            .doesNotContain("\u202e");
      } finally {
        c.closeGracefully();
      }
    }
  }

  /**
   * Issue 24 item 13: {@code approvals show} printed bidirectional overrides raw, so the person
   * reviewing read other code than what would run. They are shown escaped, and the analysis flags
   * them (which holds the run under approval_policy=findings).
   */
  @Test
  void approvalsShow_escapesBidiOverrides_andTheAnalysisFlagsThem() throws Exception {
    McpSyncClient c = client(null, "approval_policy=findings");
    try {
      JsonNode held = call(c, "run_python", Map.of("code", TROJAN_SOURCE));
      assertThat(held.path("status").asText()).as(held.toString()).isEqualTo("awaiting_approval");
      String approvalId = held.path("approval_id").asText();
      ServerProcess.Result show =
          ServerProcess.runIn(elsewhere, dataDir, null, "approvals", "show", approvalId);
      assertThat(show.stdout())
          .contains("bidi_control")
          .contains(TROJAN_SOURCE_SHOWN)
          .doesNotContain("\u202e")
          .doesNotContain("\u2066");
    } finally {
      c.closeGracefully();
    }
  }

  /**
   * Issue 24 item 13, the same display on another face: the approval prompt (MCP elicitation) is
   * what the person at a stdio client reads before deciding, and it carried the code's
   * bidirectional overrides raw. It shows them escaped, as the command line does.
   */
  @Test
  void theApprovalPrompt_showsBidiOverridesEscaped() {
    List<String> prompts = new CopyOnWriteArrayList<>();
    McpSyncClient c =
        client(
            request -> {
              prompts.add(request.message());
              return McpSchema.ElicitResult.builder(McpSchema.ElicitResult.Action.DECLINE).build();
            },
            "approval_policy=findings");
    try {
      JsonNode denied = call(c, "run_python", Map.of("code", TROJAN_SOURCE));
      assertThat(denied.path("status").asText()).as(denied.toString()).isEqualTo("denied");
      assertThat(prompts)
          .singleElement()
          .asString()
          .contains("bidi_control")
          .contains(TROJAN_SOURCE_SHOWN)
          .doesNotContain("\u202e")
          .doesNotContain("\u2066");
    } finally {
      c.closeGracefully();
    }
  }

  /** An MCP client over Streamable HTTP with an agent's key, answering prompts with {@code yes}. */
  private static McpSyncClient httpClient(
      URI base, String key, Function<McpSchema.ElicitFormRequest, McpSchema.ElicitResult> yes) {
    var transport =
        io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport.builder(
                base.toString())
            .endpoint("/mcp")
            .addHttpRequestCustomizer(
                (builder, method, uri, body, context) ->
                    builder.header("Authorization", "Bearer " + key))
            .build();
    McpSyncClient c =
        McpClient.sync(transport)
            .clientInfo(
                McpSchema.Implementation.builder("self-approver\u202e\u202e", "1.0").build())
            .requestTimeout(Duration.ofSeconds(90))
            .capabilities(McpSchema.ClientCapabilities.builder().elicitation().build())
            .elicitation(yes)
            .build();
    c.initialize();
    return c;
  }

  private String key(String tenant, String role) throws Exception {
    ServerProcess.Result r =
        ServerProcess.run(dataDir, null, "keys", "create", "--tenant", tenant, "--role", role);
    assertThat(r.exit()).as(r.stderr()).isZero();
    return r.stdout().strip();
  }

  private static HttpRequest post(URI base, String path, String key, String body) {
    return HttpRequest.newBuilder(base.resolve(path))
        .header("Authorization", "Bearer " + key)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }
}

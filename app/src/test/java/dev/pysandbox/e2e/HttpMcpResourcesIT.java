package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Client;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link McpResourcesContract} over Streamable HTTP, against the real {@code serve --http} with API
 * keys made by the CLI ({@code http_auth=keys}): alice's client runs the contract; bob, another
 * tenant, can neither list, read, subscribe to nor explain alice's runs and sessions, and is
 * answered exactly as for ids that do not exist.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Client
class HttpMcpResourcesIT extends McpResourcesContract {
  @TempDir static Path dataDir;
  @TempDir static Path workDir;
  static HttpServerProcess server;
  static McpSyncClient alice;
  static McpSyncClient bob;
  static final BlockingQueue<McpSchema.ResourceContents> updates = new LinkedBlockingQueue<>();
  static final BlockingQueue<McpSchema.ResourceContents> bobsUpdates = new LinkedBlockingQueue<>();

  static final String UNKNOWN_RUN = "run_00000000000000000000";
  static final String UNKNOWN_SESSION = "nobody-has-this";

  @BeforeAll
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  static void start() throws Exception {
    aliceKey = createKey("alice");
    String bobKey = createKey("bob");
    // One tenant here opens more sessions than its fair share of the default max_sessions.
    server =
        HttpServerProcess.start(
            dataDir,
            workDir,
            "--set",
            "rate_limit_per_second=0",
            "--set",
            "max_sessions_per_tenant=10");
    alice = client(aliceKey, updates::addAll);
    bob = client(bobKey, bobsUpdates::addAll);
  }

  @AfterAll
  static void stop() {
    for (McpSyncClient c : new McpSyncClient[] {alice, bob}) {
      if (c != null) {
        c.closeGracefully();
      }
    }
    if (server != null) {
      server.close();
    }
  }

  static String aliceKey;

  static String createKey(String tenant) throws Exception {
    ServerProcess.Result r = ServerProcess.run(dataDir, null, "keys", "create", "--tenant", tenant);
    assertThat(r.exit()).as(r.stderr()).isZero();
    return r.stdout().strip();
  }

  static McpSyncClient client(String key, Consumer<List<McpSchema.ResourceContents>> updated) {
    HttpClientStreamableHttpTransport transport =
        HttpClientStreamableHttpTransport.builder(server.uri().toString())
            .endpoint("/mcp")
            .addHttpRequestCustomizer(
                (builder, method, uri, body, context) ->
                    builder.header("Authorization", "Bearer " + key))
            .build();
    McpSyncClient client =
        McpClient.sync(transport)
            .requestTimeout(Duration.ofSeconds(90))
            .resourcesUpdateConsumer(updated)
            .build();
    client.initialize();
    return client;
  }

  @Override
  McpSyncClient client() {
    return alice;
  }

  @Override
  BlockingQueue<McpSchema.ResourceContents> updates() {
    return updates;
  }

  /** The message with the ids taken out, to compare a foreign id's answer with an unknown one's. */
  static String withoutIds(McpError e, String... ids) {
    String m = e.getMessage();
    for (String id : ids) {
      m = m.replace(id, "<id>");
    }
    return e.getJsonRpcError().code() + " " + m + " " + e.getJsonRpcError().data();
  }

  @Test
  void anotherTenantsRunsAndSessions_areAnsweredAsUnknownIds() throws Exception {
    String session = "alices-" + System.nanoTime();
    String run =
        (String)
            run(Map.of(
                    "code",
                    "open('/mnt/data/secret.txt','w').write('alice only')",
                    "session_id",
                    session))
                .get("run_id");

    assertThat(bob.listResources().resources())
        .extracting(McpSchema.Resource::uri)
        .doesNotContain("pysandbox://runs/" + run);

    List<String[]> pairs =
        List.of(
            new String[] {"pysandbox://runs/" + run, "pysandbox://runs/" + UNKNOWN_RUN},
            new String[] {
              "pysandbox://runs/" + run + "/files/secret.txt",
              "pysandbox://runs/" + UNKNOWN_RUN + "/files/secret.txt"
            },
            new String[] {
              "pysandbox://sessions/" + session + "/files/secret.txt",
              "pysandbox://sessions/" + UNKNOWN_SESSION + "/files/secret.txt"
            });
    for (String[] p : pairs) {
      McpError foreign =
          errorOf(() -> bob.readResource(McpSchema.ReadResourceRequest.builder(p[0]).build()));
      McpError unknown =
          errorOf(() -> bob.readResource(McpSchema.ReadResourceRequest.builder(p[1]).build()));
      assertThat(foreign.getJsonRpcError().code())
          .as(p[0])
          .isEqualTo(McpSchema.ErrorCodes.RESOURCE_NOT_FOUND);
      assertThat(withoutIds(foreign, run, session))
          .as(p[0])
          .isEqualTo(withoutIds(unknown, UNKNOWN_RUN, UNKNOWN_SESSION));
    }

    McpError foreignSub =
        errorOf(
            () ->
                bob.subscribeResource(
                    McpSchema.SubscribeRequest.builder("pysandbox://runs/" + run).build()));
    McpError unknownSub =
        errorOf(
            () ->
                bob.subscribeResource(
                    McpSchema.SubscribeRequest.builder("pysandbox://runs/" + UNKNOWN_RUN).build()));
    assertThat(withoutIds(foreignSub, run)).isEqualTo(withoutIds(unknownSub, UNKNOWN_RUN));

    McpError foreignPrompt =
        errorOf(() -> bob.getPrompt(promptRequest("explain_run", Map.of("run_id", run))));
    McpError unknownPrompt =
        errorOf(() -> bob.getPrompt(promptRequest("explain_run", Map.of("run_id", UNKNOWN_RUN))));
    assertThat(withoutIds(foreignPrompt, run)).isEqualTo(withoutIds(unknownPrompt, UNKNOWN_RUN));

    // alice still reads all of it
    assertThat(
            ((McpSchema.TextResourceContents)
                    read("pysandbox://sessions/" + session + "/files/secret.txt").contents().get(0))
                .text())
        .isEqualTo("alice only");
  }

  @Test
  void aRunOfAlices_endingWhileBobIsSubscribedToNothing_isNotToldToBob() throws Exception {
    String uri = "pysandbox://runs/" + run(Map.of("code", "print('x')")).get("run_id");
    alice.subscribeResource(McpSchema.SubscribeRequest.builder(uri).build());
    awaitUpdate(uri, 10);
    assertThat(bobsUpdates.poll(1, TimeUnit.SECONDS)).isNull();
  }

  // -- the servlet in front of the SDK's: bodies it answers, bodies it passes on ------------------

  static final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  /** An MCP session of alice's, opened over raw HTTP; its id. */
  static String rawSession() throws Exception {
    HttpResponse<String> init =
        post(
            null,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}");
    assertThat(init.statusCode()).as(init.body()).isEqualTo(200);
    String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
    post(session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    return session;
  }

  static HttpResponse<String> post(String session, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(server.uri().resolve("/mcp"))
            .timeout(Duration.ofSeconds(60))
            .header("Authorization", "Bearer " + aliceKey)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Protocol-Version", "2025-06-18")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      b.header("Mcp-Session-Id", session);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The JSON-RPC message of an answer, sent as JSON or as the one event of an SSE stream. */
  static JsonNode message(HttpResponse<String> r) {
    String body = r.body();
    if (r.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream")) {
      body =
          body.lines()
              .filter(l -> l.startsWith("data:"))
              .map(l -> l.substring(5).strip())
              .reduce((a, b) -> b)
              .orElse("");
    }
    return parse(body);
  }

  @Test
  void aLargeToolCallWhoseMethodComesAfterItsParams_stillReachesTheTool() throws Exception {
    String session = rawSession();
    String content =
        Base64.getEncoder().encodeToString("x".repeat(200_000).getBytes(StandardCharsets.UTF_8));
    HttpResponse<String> r =
        post(
            session,
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"params\":{\"name\":\"upload_file\",\"arguments\":{"
                + "\"session_id\":\"big-upload\",\"filename\":\"big.txt\",\"content_base64\":\""
                + content
                + "\"}},\"method\":\"tools/call\"}");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode answer = message(r);
    assertThat(answer.path("id").asInt()).isEqualTo(7);
    assertThat(answer.path("result").path("isError").asBoolean()).as(r.body()).isFalse();
    assertThat(answer.path("result").path("structuredContent").path("size_bytes").asLong())
        .isEqualTo(200_000);
  }

  @Test
  void aResourceRequestOver64KiB_isRefused_whereverItsMethodIs() throws Exception {
    String session = rawSession();
    String pad = "p".repeat(100_000);
    for (String body :
        List.of(
            "{\"jsonrpc\":\"2.0\",\"id\":\"l1\",\"method\":\"resources/list\",\"params\":{\"_meta\":{\"pad\":\""
                + pad
                + "\"}}}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"l1\",\"params\":{\"_meta\":{\"pad\":\""
                + pad
                + "\"}},\"method\":\"resources/list\"}")) {
      HttpResponse<String> r = post(session, body);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      JsonNode answer = message(r);
      assertThat(answer.path("id").asText()).isEqualTo("l1");
      assertThat(answer.path("error").path("code").asInt())
          .isEqualTo(McpSchema.ErrorCodes.INVALID_REQUEST);
      assertThat(answer.path("error").path("message").asText()).contains("65536 bytes");
    }
  }

  @Test
  void aSecondMethodKeyInABody_isRefused_notActedOn() throws Exception {
    String session = rawSession();
    HttpResponse<String> r =
        post(
            session,
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":{\"pad\":\""
                + "p".repeat(70_000)
                + "\"},\"method\":\"resources/subscribe\"}");
    assertThat(r.body()).doesNotContain("\"result\"");
    assertThat(r.body()).doesNotContain("resourceTemplates").doesNotContain("\"tools\"");
  }
}

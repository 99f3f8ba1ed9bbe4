package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Streamable HTTP's streams, cancels and edge answers on the real server ({@code serve --http},
 * {@code http_auth=none}), through a raw socket client ({@link RawMcpHttp}) where a library would
 * not drop a connection or send a wrong header, and through the MCP Java SDK's client. Guards issue
 * 23: a cancel over HTTP was answered 202 and ignored; streams had no event ids of their own, no
 * priming event and no resumption; an unsupported protocol version was served; a body that is not
 * JSON was answered with the parser's own text; an unknown tool was named {@code invalid_tool_name}
 * whatever its name.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class HttpMcpStreamsIT {
  @TempDir static Path dataDir;
  @TempDir static Path workDir;
  static HttpServerProcess server;
  static URI base;

  @BeforeAll
  static void start() throws Exception {
    server = HttpServerProcess.start(dataDir, workDir, "--set", "http_auth=none");
    base = server.uri();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  static JsonNode resultOf(RawMcpHttp.Event e) throws IOException {
    return e.json().path("result").path("structuredContent");
  }

  /** Calls a tool on a stream of its own and returns its answer's structured content. */
  static JsonNode callTool(String session, Object id, String tool, String args) throws IOException {
    try (RawMcpHttp r = openCall(session, id, tool, args)) {
      List<RawMcpHttp.Event> events = r.rest();
      RawMcpHttp.Event last = events.get(events.size() - 1);
      assertThat(last.json().path("id").toString())
          .isEqualTo(RawMcpHttp.JSON.valueToTree(id).toString());
      return resultOf(last);
    }
  }

  /** Calls {@code tool} in {@code session}: the answer's stream, open. */
  static RawMcpHttp openCall(String session, Object id, String tool, String args)
      throws IOException {
    return RawMcpHttp.post(base, session, RawMcpHttp.call(id, tool, args));
  }

  /** Resumes {@code session}'s stream after {@code lastEventId}. */
  static RawMcpHttp resume(String session, String lastEventId) throws IOException {
    return RawMcpHttp.send(
        base,
        "GET",
        null,
        "Accept",
        "text/event-stream",
        "Mcp-Session-Id",
        session,
        "Last-Event-ID",
        lastEventId);
  }

  /** Cancels request {@code id} in {@code session}, as a client does; the server takes it (202). */
  static void cancel(String session, int id) throws IOException {
    try (RawMcpHttp r =
        RawMcpHttp.post(
            base,
            session,
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
                + id
                + ",\"reason\":\"the user pressed Esc\"}}")) {
      assertThat(r.status).isEqualTo(202);
    }
  }

  @Test
  void aCallsStream_beginsWithAPrimingEventAndRetry_andEachEventHasAnIdOfItsOwn() throws Exception {
    String session = RawMcpHttp.session(base, "2025-11-25");
    try (RawMcpHttp r =
        RawMcpHttp.post(
            base,
            session,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                + "\"run_python\",\"arguments\":{\"code\":\"import time\\nfor i in range(3):\\n"
                + "    print(i, flush=True)\\n    time.sleep(1)\"},\"_meta\":{\"progressToken\":"
                + "\"p\"}}}")) {
      assertThat(r.status).isEqualTo(200);
      assertThat(r.headers.get("content-type")).startsWith("text/event-stream");
      List<RawMcpHttp.Event> events = r.rest();
      RawMcpHttp.Event priming = events.get(0);
      assertThat(priming.id()).isNotBlank().isNotEqualTo(session);
      assertThat(priming.data()).isEmpty();
      assertThat(priming.retry()).isNotBlank();
      assertThat(events).hasSizeGreaterThanOrEqualTo(3);
      assertThat(events)
          .extracting(RawMcpHttp.Event::id)
          .doesNotHaveDuplicates()
          .doesNotContainNull();
      assertThat(resultOf(events.get(events.size() - 1)).path("stdout").asText())
          .isEqualTo("0\n1\n2\n");
    }
  }

  @Test
  void aStreamDroppedMidCall_isResumedWithLastEventId_andTheAnswerArrivesOnce() throws Exception {
    String session = RawMcpHttp.session(base, "2025-11-25");
    String primed;
    try (RawMcpHttp r =
        openCall(
            session,
            "drop-1",
            "run_python",
            "{\"code\":\"import time\\ntime.sleep(5)\\nprint('five')\",\"session_id\":\"drop\"}")) {
      primed = r.next().id();
      // the client's network goes away while the run goes on
    }
    List<RawMcpHttp.Event> resumed;
    try (RawMcpHttp get = resume(session, primed)) {
      assertThat(get.status).isEqualTo(200);
      resumed = get.rest();
    }
    List<RawMcpHttp.Event> answers =
        resumed.stream().filter(e -> e.data().contains("\"drop-1\"")).toList();
    assertThat(answers).hasSize(1);
    assertThat(resultOf(answers.get(0)).path("status").asText()).isEqualTo("succeeded");
    assertThat(resultOf(answers.get(0)).path("stdout").asText()).isEqualTo("five\n");
    // a dropped stream is no cancel: the run's record says it ran to its end
    JsonNode runs = callTool(session, 2, "list_runs", "{\"session_id\":\"drop\"}");
    assertThat(runs.path("runs").get(0).path("status").asText()).isEqualTo("succeeded");
    // and once everything was delivered, a resume says there is nothing more
    String last = resumed.get(resumed.size() - 1).id();
    try (RawMcpHttp again = resume(session, last)) {
      assertThat(again.status).isEqualTo(204);
    }
  }

  @Test
  void cancelOverHttp_stopsTheRun_sendsNoAnswer_andTheSessionStaysUsable() throws Exception {
    String session = RawMcpHttp.session(base, "2025-11-25");
    String last;
    try (RawMcpHttp r =
        openCall(
            session, 11, "run_python", "{\"code\":\"while True: pass\",\"session_id\":\"spin\"}")) {
      last = r.next().id();
      cancel(session, 11);
      List<RawMcpHttp.Event> after = r.rest();
      assertThat(after).noneMatch(e -> e.data().contains("\"id\":11"));
      if (!after.isEmpty()) {
        last = after.get(after.size() - 1).id();
      }
    }
    JsonNode runs = callTool(session, 12, "list_runs", "{\"session_id\":\"spin\"}");
    assertThat(runs.path("runs").get(0).path("status").asText()).isEqualTo("cancelled");
    JsonNode next =
        callTool(
            session,
            13,
            "run_python",
            "{\"code\":\"print('still here')\",\"session_id\":\"spin\"}");
    assertThat(next.path("stdout").asText()).isEqualTo("still here\n");
    // a client that reconnects to the cancelled call's stream hears it has ended
    try (RawMcpHttp get = resume(session, last)) {
      assertThat(get.status).isEqualTo(204);
    }
  }

  @Test
  void aCancelNamingAnotherSessionsRequestId_changesNothing() throws Exception {
    String mine = RawMcpHttp.session(base, "2025-11-25");
    String theirs = RawMcpHttp.session(base, "2025-11-25");
    try (RawMcpHttp r =
        openCall(
            mine, 21, "run_python", "{\"code\":\"import time\\ntime.sleep(3)\\nprint('done')\"}")) {
      r.next();
      cancel(theirs, 21);
      List<RawMcpHttp.Event> events = r.rest();
      JsonNode answer = resultOf(events.get(events.size() - 1));
      assertThat(answer.path("status").asText()).isEqualTo("succeeded");
      assertThat(answer.path("stdout").asText()).isEqualTo("done\n");
    }
  }

  @Test
  void aResumeWithAnUnknownOrAnotherSessionsEventId_isRefused_andShowsNothingOfIt()
      throws Exception {
    String mine = RawMcpHttp.session(base, "2025-11-25");
    String theirs = RawMcpHttp.session(base, "2025-11-25");
    String eventId;
    try (RawMcpHttp r = openCall(mine, 31, "run_python", "{\"code\":\"print('secret-31')\"}")) {
      eventId = r.next().id();
      r.rest();
    }
    for (String id : List.of(eventId, "garbage", "999_0", "1_99999", "-1_0")) {
      try (RawMcpHttp get = resume(theirs, id)) {
        String body = get.body();
        assertThat(get.status).as(id + ": " + body).isEqualTo(410);
        assertThat(body).doesNotContain("secret-31");
        JsonNode error = RawMcpHttp.JSON.readTree(body).path("error");
        assertThat(error.path("message").asText()).contains("cannot resume");
      }
    }
  }

  @Test
  void anUnsupportedProtocolVersion_is400_namingTheSupportedOnes() throws Exception {
    String session = RawMcpHttp.session(base, "2025-11-25");
    try (RawMcpHttp r =
        RawMcpHttp.post(
            base,
            session,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
            "MCP-Protocol-Version",
            "1999-01-01")) {
      assertThat(r.status).isEqualTo(400);
      JsonNode error = RawMcpHttp.JSON.readTree(r.body()).path("error");
      assertThat(error.path("message").asText())
          .contains("1999-01-01")
          .contains("2025-03-26, 2025-06-18, 2025-11-25");
    }
    try (RawMcpHttp ok =
        RawMcpHttp.post(
            base,
            session,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}",
            "MCP-Protocol-Version",
            "2025-06-18")) {
      assertThat(ok.status).isEqualTo(200);
      ok.body();
    }
  }

  @Test
  void aBodyThatIsNotJson_isAParseError_inOurWords() throws Exception {
    String session = RawMcpHttp.session(base, "2025-11-25");
    for (String body : List.of("hello", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/")) {
      try (RawMcpHttp r = RawMcpHttp.post(base, session, body)) {
        assertThat(r.status).isEqualTo(400);
        String answer = r.body();
        JsonNode error = RawMcpHttp.JSON.readTree(answer).path("error");
        assertThat(error.path("code").asInt()).isEqualTo(-32700);
        assertThat(error.path("message").asText()).startsWith("Parse error");
        assertThat(answer)
            .doesNotContain("Unrecognized token")
            .doesNotContain("was expecting")
            .doesNotContain("Source:")
            .doesNotContain("Exception");
      }
    }
  }

  @Test
  void anUnknownTool_isAnErrorNamingIt_asOverStdio(@TempDir Path stdioData) {
    String http;
    HttpClientStreamableHttpTransport transport =
        HttpClientStreamableHttpTransport.builder(base.toString()).endpoint("/mcp").build();
    try (McpSyncClient client =
        McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build()) {
      client.initialize();
      http = refusal(client);
    }
    StdioClientTransport stdioTransport =
        new StdioClientTransport(
            ServerParameters.builder(TestServices.launcher().toString())
                .args("serve", "--data-dir", stdioData.toString())
                .build(),
            McpJsonDefaults.getMapper());
    McpSyncClient stdio =
        McpClient.sync(stdioTransport).requestTimeout(Duration.ofSeconds(60)).build();
    String overStdio;
    try {
      stdio.initialize();
      overStdio = refusal(stdio);
    } finally {
      stdio.closeGracefully();
    }
    assertThat(http).contains("no_such_tool").doesNotContain("invalid_tool_name");
    assertThat(http).isEqualTo(overStdio);
  }

  private static String refusal(McpSyncClient client) {
    Throwable[] thrown = new Throwable[1];
    assertThatThrownBy(
            () ->
                client.callTool(
                    CallToolRequest.builder("no_such_tool").arguments(Map.of()).build()))
        .isInstanceOfSatisfying(McpError.class, e -> thrown[0] = e);
    McpError e = (McpError) thrown[0];
    assertThat(e.getJsonRpcError().code()).isEqualTo(-32602);
    return e.getJsonRpcError().message();
  }
}

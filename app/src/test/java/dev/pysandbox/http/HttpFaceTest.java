package dev.pysandbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.ManualTime;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.mcp.McpFace;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.MDC;

/**
 * The HTTP face's protocol hygiene, in this process: a real Jetty on an ephemeral port in front of
 * the real core, a fake key store at the seam, a plain HTTP client (and a raw socket where the
 * client would not send what is tested).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class HttpFaceTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dataDir;
  static DefaultSandboxService service;
  static HttpFace face;
  static URI base;
  static final HttpClient client = HttpClient.newHttpClient();
  static final Map<String, Object> seenByMount = new HashMap<>();

  @BeforeAll
  static void start() {
    PysandboxConfig config =
        TestServices.config(
            dataDir,
            Map.of(
                "pool_size", "0",
                "http_port", "0",
                "rate_limit_per_second", "1000",
                "rate_limit_burst", "1000",
                "upload_max_bytes", "1000"));
    service = Assembly.start(config);
    face =
        new HttpFace(config, new FakeKeys(), service, McpFace.forTenants(service, 65536))
            .mount("/api/v1/*", new EchoServlet(), 100)
            .withoutKey("/api/v1/document");
    face.start();
    base = face.uri();
  }

  @AfterAll
  static void stop() {
    if (face != null) {
      face.stop(() -> {});
    }
    if (service != null) {
      service.close();
    }
  }

  /** What a mounted servlet (the REST API) finds on its request. */
  static final class EchoServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      synchronized (seenByMount) {
        seenByMount.put("caller", request.getAttribute(HttpFace.CALLER_ATTRIBUTE));
        seenByMount.put("tenant", request.getAttribute(HttpFace.TENANT_ATTRIBUTE));
        seenByMount.put("request_id", request.getAttribute(HttpFace.REQUEST_ID_ATTRIBUTE));
        seenByMount.put("mdc_tenant", MDC.get("tenant"));
        seenByMount.put("mdc_request_id", MDC.get("request_id"));
      }
      byte[] body = request.getInputStream().readAllBytes();
      response.setContentType("text/plain");
      response.getOutputStream().write(("read " + body.length).getBytes(StandardCharsets.UTF_8));
    }
  }

  static HttpResponse<String> send(String method, String path, String body, String... headers)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(base.resolve(path))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> get(String path, String... headers) throws Exception {
    return send("GET", path, null, headers);
  }

  static JsonNode errorOf(HttpResponse<String> r) throws IOException {
    assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
    JsonNode error = JSON.readTree(r.body()).get("error");
    assertThat(error).as(r.body()).isNotNull();
    assertThat(error.fieldNames()).toIterable().containsExactly("code", "message", "retryable");
    return error;
  }

  /** Sends raw bytes (headers a client library would not send) and returns the whole answer. */
  static String raw(String request) throws IOException {
    try (Socket s = new Socket(base.getHost(), base.getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  // -- no key needed ---------------------------------------------------------------------------

  @Test
  void health_answersOkWithoutAKey() throws Exception {
    HttpResponse<String> r = get("/health");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(r.body())).isEqualTo(JSON.readTree("{\"status\":\"ok\"}"));
  }

  @Test
  void ready_answersTrueWithoutAKeyAndWithoutDetails() throws Exception {
    HttpResponse<String> r = get("/ready");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(r.body())).isEqualTo(JSON.readTree("{\"ready\":true}"));
  }

  /** Regression: GET /api/v1/openapi.json, documented as keyless, answered 401 without a key. */
  @Test
  void aPathLetInWithoutKey_answersGetAndHeadWithAnyKeyOrNone_andNothingElse() throws Exception {
    assertThat(get("/api/v1/document").statusCode()).isEqualTo(200);
    assertThat(get("/api/v1/document", "Authorization", "Bearer pk_wrong").statusCode())
        .isEqualTo(200);
    assertThat(send("HEAD", "/api/v1/document", null).statusCode()).isEqualTo(200);
    assertThat(send("POST", "/api/v1/document", "x").statusCode()).isEqualTo(401);
    assertThat(get("/api/v1/document/more").statusCode()).isEqualTo(401);
    assertThat(get("/api/v1/documents").statusCode()).isEqualTo(401);
  }

  // -- authentication --------------------------------------------------------------------------

  @Test
  void noKey_gets401WithBearerChallengeAndTheErrorShape() throws Exception {
    HttpResponse<String> r = get("/metrics");
    assertThat(r.statusCode()).isEqualTo(401);
    assertThat(r.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
    JsonNode error = errorOf(r);
    assertThat(error.get("code").asText()).isEqualTo("unauthenticated");
    assertThat(error.get("retryable").asBoolean()).isFalse();
    assertThat(error.get("message").asText()).contains("Authorization: Bearer");
  }

  /**
   * Regression (HttpTenantsIT, once in a full run): a 401 sent over an unread request body made the
   * server close the connection, and the client's next request on it got no answer.
   */
  @Test
  void refusedRequestsWithBodies_leaveTheConnectionUsable_forTheNextRequest() throws Exception {
    String body = "{\"code\": \"" + "x".repeat(60_000) + "\"}";
    for (int i = 0; i < 200; i++) {
      HttpResponse<String> refused =
          send(
              "POST",
              "/api/v1/runs",
              body,
              "Content-Type",
              "application/json",
              "Authorization",
              "Bearer pk_wrong");
      assertThat(refused.statusCode()).isEqualTo(401);
      assertThat(refused.headers().firstValue("Connection")).isNotEqualTo(Optional.of("close"));
      assertThat(get("/health").statusCode()).as("request %d after a refusal", i).isEqualTo(200);
    }
  }

  @Test
  void wrongKey_gets401_onEveryRouteButTheHealthChecks() throws Exception {
    for (String path : new String[] {"/metrics", "/mcp", "/api/v1/runs", "/nowhere"}) {
      HttpResponse<String> r = get(path, "Authorization", "Bearer pk_wrong");
      assertThat(r.statusCode()).as(path).isEqualTo(401);
      assertThat(r.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
      assertThat(errorOf(r).get("code").asText()).isEqualTo("unauthenticated");
    }
    assertThat(get("/metrics", "X-API-Key", "pk_wrong").statusCode()).isEqualTo(401);
  }

  @Test
  void rightKey_asBearerOrXApiKey_getsIn() throws Exception {
    assertThat(get("/metrics", "Authorization", "Bearer " + FakeKeys.GOOD).statusCode())
        .isEqualTo(200);
    assertThat(get("/metrics", "X-API-Key", FakeKeys.GOOD).statusCode()).isEqualTo(200);
  }

  @Test
  void metrics_isPrometheusText_withRequestsJvmAndSessions() throws Exception {
    get("/health");
    HttpResponse<String> r = get("/metrics", "X-API-Key", FakeKeys.GOOD);
    assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
    assertThat(r.body())
        .contains("http_server_requests_seconds_count{method=\"GET\",route=\"/health\"")
        .contains("jvm_threads_live_threads")
        .contains("jvm_memory_used_bytes")
        .contains("pysandbox_sessions_open")
        .contains("http_server_requests_active");
  }

  @Test
  void metrics_countSecurityEventsByKind_everyKindShownFromZero() throws Exception {
    String before = get("/metrics", "X-API-Key", FakeKeys.GOOD).body();
    for (String kind : dev.pysandbox.api.op.Operations.SECURITY_EVENT_KINDS) {
      assertThat(before).contains("pysandbox_security_events_total{kind=\"" + kind + "\"}");
    }
    assertThat(before).contains("pysandbox_security_events_not_stored_total 0.0");
    double stopped = sample(before, "pysandbox_security_events_total{kind=\"limit_stopped_run\"}");
    dev.pysandbox.api.RunRecord r =
        service.run(
            new dev.pysandbox.api.ExecutionRequest("import time\ntime.sleep(30)", null, null, 1));
    assertThat(r.status()).isEqualTo(dev.pysandbox.api.RunStatus.TIMED_OUT);
    String after = get("/metrics", "X-API-Key", FakeKeys.GOOD).body();
    assertThat(sample(after, "pysandbox_security_events_total{kind=\"limit_stopped_run\"}"))
        .isEqualTo(stopped + 1);
  }

  /** The value of one series in Prometheus text. */
  private static double sample(String text, String series) {
    return text.lines()
        .filter(l -> l.startsWith(series + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
        .findFirst()
        .orElseThrow(() -> new AssertionError(series + " not in the metrics"));
  }

  @Test
  void mountedServlet_findsCallerTenantAndRequestId_onTheRequestAndInTheMdc() throws Exception {
    HttpResponse<String> r =
        send("POST", "/api/v1/echo", "hello", "X-API-Key", FakeKeys.GOOD, "X-Request-Id", "r-1");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("read 5");
    synchronized (seenByMount) {
      assertThat(seenByMount)
          .containsEntry("caller", new Caller("key-good", "local"))
          .containsEntry("tenant", "local")
          .containsEntry("request_id", "r-1")
          .containsEntry("mdc_tenant", "local")
          .containsEntry("mdc_request_id", "r-1");
    }
  }

  // -- request ids -----------------------------------------------------------------------------

  @Test
  void requestId_isKeptWhenSafe_andReplacedWhenNot() throws Exception {
    assertThat(get("/health", "X-Request-Id", "abc.DEF_1-2").headers().firstValue("X-Request-Id"))
        .hasValue("abc.DEF_1-2");
    for (String bad : new String[] {"x".repeat(65), "a b", "<script>", "é"}) {
      String id = get("/health", "X-Request-Id", bad).headers().firstValue("X-Request-Id").get();
      assertThat(id).isNotEqualTo(bad).matches("[0-9a-f]{16}");
    }
    assertThat(get("/nowhere").headers().firstValue("X-Request-Id")).isPresent();
    HttpResponse<String> containerError =
        send("PUT", "/mcp", "{}", "X-API-Key", FakeKeys.GOOD, "X-Request-Id", "kept-on-405");
    assertThat(containerError.statusCode()).isEqualTo(405);
    assertThat(containerError.headers().firstValue("X-Request-Id")).hasValue("kept-on-405");
  }

  // -- DNS rebinding ---------------------------------------------------------------------------

  @Test
  void hostNotAllowed_gets403_evenWithAKey() throws Exception {
    String answer =
        raw(
            "GET /metrics HTTP/1.1\r\nHost: evil.example:"
                + base.getPort()
                + "\r\nX-API-Key: "
                + FakeKeys.GOOD
                + "\r\nConnection: close\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 403").contains("\"code\":\"forbidden\"");
    assertThat(answer).contains("allowed_hosts");
  }

  @Test
  void localhostHost_isAllowed() throws Exception {
    String answer =
        raw(
            "GET /metrics HTTP/1.1\r\nHost: localhost:"
                + base.getPort()
                + "\r\nX-API-Key: "
                + FakeKeys.GOOD
                + "\r\nConnection: close\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 200");
  }

  @Test
  void otherOrigin_gets403_sameOriginPasses() throws Exception {
    HttpResponse<String> r =
        get("/metrics", "X-API-Key", FakeKeys.GOOD, "Origin", "http://evil.example");
    assertThat(r.statusCode()).isEqualTo(403);
    assertThat(errorOf(r).get("message").asText()).contains("allowed_origins");
    assertThat(r.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
    HttpResponse<String> same =
        get("/metrics", "X-API-Key", FakeKeys.GOOD, "Origin", "http://127.0.0.1:" + base.getPort());
    assertThat(same.statusCode()).isEqualTo(200);
  }

  // -- the error shape for the container's own answers ------------------------------------------

  @Test
  void unknownPath_gets404InTheErrorShape() throws Exception {
    HttpResponse<String> r = get("/nowhere", "X-API-Key", FakeKeys.GOOD);
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(errorOf(r).get("code").asText()).isEqualTo("not_found");
  }

  @Test
  void wrongMethod_gets405InTheErrorShape() throws Exception {
    HttpResponse<String> r = send("PUT", "/mcp", "{}", "X-API-Key", FakeKeys.GOOD);
    assertThat(r.statusCode()).isEqualTo(405);
    assertThat(errorOf(r).get("code").asText()).isEqualTo("method_not_allowed");
    HttpResponse<String> health = send("DELETE", "/metrics", null, "X-API-Key", FakeKeys.GOOD);
    assertThat(health.statusCode()).isEqualTo(405);
    assertThat(health.body()).doesNotContain("<html").doesNotContain("at org.");
  }

  @Test
  void headersTooLarge_get431InTheErrorShape() throws Exception {
    String answer =
        raw(
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
                + "a".repeat(HttpFace.MAX_REQUEST_HEADER_BYTES + 10)
                + "\r\nConnection: close\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 431").contains("\"code\":\"payload_too_large\"");
    assertThat(answer).containsIgnoringCase("X-Request-Id:").doesNotContain("<html");
  }

  @Test
  void malformedRequestLine_gets400InTheErrorShape() throws Exception {
    String answer = raw("GARBAGE\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 400").contains("\"code\":\"invalid_argument\"");
  }

  // -- body limits -----------------------------------------------------------------------------

  @Test
  void mcpBodyOverTheMessageLimit_gets413() throws Exception {
    int limit = McpFace.maxMessageBytes(1000);
    HttpResponse<String> r =
        send(
            "POST",
            "/mcp",
            "x".repeat(limit + 1),
            "X-API-Key",
            FakeKeys.GOOD,
            "Content-Type",
            "application/json");
    assertThat(r.statusCode()).isEqualTo(413);
    assertThat(errorOf(r).get("code").asText()).isEqualTo("payload_too_large");
  }

  @Test
  void mountedRouteBodyOverItsLimit_gets413_withOrWithoutALength() throws Exception {
    HttpResponse<String> declared =
        send("POST", "/api/v1/echo", "y".repeat(101), "X-API-Key", FakeKeys.GOOD);
    assertThat(declared.statusCode()).isEqualTo(413);
    assertThat(errorOf(declared).get("message").asText()).contains("100 bytes");
    String chunked =
        raw(
            "POST /api/v1/echo HTTP/1.1\r\nHost: 127.0.0.1:"
                + base.getPort()
                + "\r\nX-API-Key: "
                + FakeKeys.GOOD
                + "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                + "c8\r\n"
                + "z".repeat(200)
                + "\r\n0\r\n\r\n");
    assertThat(chunked).startsWith("HTTP/1.1 413").contains("\"code\":\"payload_too_large\"");
    assertThat(send("POST", "/api/v1/echo", "y".repeat(100), "X-API-Key", FakeKeys.GOOD).body())
        .isEqualTo("read 100");
  }

  // -- MCP protocol hygiene --------------------------------------------------------------------

  @Test
  void malformedJsonRpcBody_getsAJsonRpcErrorAtOnce() throws Exception {
    for (String body :
        new String[] {"garbage", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"}) {
      HttpResponse<String> r =
          send(
              "POST",
              "/mcp",
              body,
              "X-API-Key",
              FakeKeys.GOOD,
              "Content-Type",
              "application/json",
              "Accept",
              "application/json, text/event-stream");
      assertThat(r.statusCode()).isEqualTo(400);
      JsonNode answer = JSON.readTree(r.body());
      assertThat(answer.get("jsonrpc").asText()).isEqualTo("2.0");
      assertThat(answer.get("error").get("code").asInt()).isNegative();
      assertThat(r.body()).doesNotContain("stackTrace");
    }
  }

  @Test
  void mcpSessionOfAnotherTenant_isAnsweredAsOneThatDoesNotExist() throws Exception {
    HttpResponse<String> init =
        send(
            "POST",
            "/mcp",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
            "X-API-Key",
            FakeKeys.GOOD,
            "Content-Type",
            "application/json",
            "Accept",
            "application/json, text/event-stream");
    assertThat(init.statusCode()).as(init.body()).isEqualTo(200);
    assertThat(JSON.readTree(init.body()).get("result").get("protocolVersion").asText())
        .isEqualTo("2025-06-18");
    String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
    String list = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
    HttpResponse<String> other =
        send(
            "POST",
            "/mcp",
            list,
            "X-API-Key",
            FakeKeys.OTHER_TENANT,
            "Mcp-Session-Id",
            session,
            "Content-Type",
            "application/json",
            "Accept",
            "application/json, text/event-stream");
    assertThat(other.statusCode()).isEqualTo(404);
    // Regression: an unknown id got the SDK's own answer, which told the two apart.
    for (String method : new String[] {"POST", "GET", "DELETE"}) {
      String[] headers = {
        "X-API-Key",
        FakeKeys.OTHER_TENANT,
        "Content-Type",
        "application/json",
        "Accept",
        "application/json, text/event-stream",
        "Mcp-Session-Id",
        session
      };
      String body = method.equals("POST") ? list : null;
      HttpResponse<String> theirs = send(method, "/mcp", body, headers);
      headers[headers.length - 1] = "5d1f0b6e-0000-4000-8000-000000000000";
      HttpResponse<String> unknown = send(method, "/mcp", body, headers);
      assertThat(theirs.statusCode()).as(method).isEqualTo(404);
      assertThat(unknown.statusCode()).as(method).isEqualTo(404);
      assertThat(theirs.body()).as(method).isEqualTo(unknown.body());
    }
    HttpResponse<String> owner =
        send(
            "POST",
            "/mcp",
            list,
            "X-API-Key",
            FakeKeys.GOOD,
            "Mcp-Session-Id",
            session,
            "Content-Type",
            "application/json",
            "Accept",
            "application/json, text/event-stream");
    assertThat(owner.statusCode()).isEqualTo(200);
    assertThat(owner.body()).contains("run_python");
  }

  // -- rate limits and refusing to start ----------------------------------------------------

  @Test
  void burstPastTheLimit_gets429WithRetryAfter_untilTimeRefills(@TempDir Path dir)
      throws Exception {
    ManualTime time = ManualTime.frozen(java.time.Instant.parse("2026-01-01T00:00:00Z"));
    PysandboxConfig config =
        TestServices.config(
            dir, Map.of("http_port", "0", "rate_limit_per_second", "0.5", "rate_limit_burst", "3"));
    HttpFace limited =
        new HttpFace(config, new FakeKeys(), service, McpFace.forTenants(service, 1000), time);
    limited.start();
    try {
      URI at = limited.uri().resolve("/metrics");
      HttpRequest request = HttpRequest.newBuilder(at).header("X-API-Key", FakeKeys.GOOD).build();
      for (int i = 0; i < 3; i++) {
        assertThat(client.send(request, HttpResponse.BodyHandlers.ofString()).statusCode())
            .isEqualTo(200);
      }
      HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(429);
      assertThat(r.headers().firstValue("Retry-After")).hasValue("2");
      JsonNode error = errorOf(r);
      assertThat(error.get("code").asText()).isEqualTo("rate_limited");
      assertThat(error.get("retryable").asBoolean()).isTrue();
      HttpRequest otherKey =
          HttpRequest.newBuilder(at).header("X-API-Key", FakeKeys.OTHER_TENANT).build();
      assertThat(client.send(otherKey, HttpResponse.BodyHandlers.ofString()).statusCode())
          .as("another key has its own bucket")
          .isEqualTo(200);
      time.advance(Duration.ofSeconds(2));
      assertThat(client.send(request, HttpResponse.BodyHandlers.ofString()).statusCode())
          .isEqualTo(200);
    } finally {
      limited.stop(() -> {});
    }
  }

  /** A face of its own on {@code time}, started, with {@code settings} (key, value, ...). */
  private static HttpFace startFace(Path dir, KeyCheck keys, ManualTime time, String... settings) {
    Map<String, String> all = new HashMap<>(Map.of("http_port", "0"));
    for (int i = 0; i < settings.length; i += 2) {
      all.put(settings[i], settings[i + 1]);
    }
    HttpFace f =
        new HttpFace(
            TestServices.config(dir, all), keys, service, McpFace.forTenants(service, 1000), time);
    f.start();
    return f;
  }

  private static HttpResponse<String> call(HttpRequest request) throws Exception {
    return client.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static ManualTime frozenTime() {
    return ManualTime.frozen(java.time.Instant.parse("2026-01-01T00:00:00Z"));
  }

  /**
   * Regression: with {@code http_auth=none} every caller shared one budget of 20/s (burst 40), so a
   * local client's burst (the MCP conformance suite's) got 429 at once.
   */
  @Test
  void httpAuthNone_aBurstOf200QuickCalls_fromOneClient_passesWithTheDefaults(@TempDir Path dir)
      throws Exception {
    HttpFace open = startFace(dir, KeyCheck.EMPTY, frozenTime(), "http_auth", "none");
    try {
      HttpRequest request = HttpRequest.newBuilder(open.uri().resolve("/metrics")).build();
      java.util.List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> calls =
          new java.util.ArrayList<>();
      for (int i = 0; i < 200; i++) {
        calls.add(client.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
      }
      for (var c : calls) {
        HttpResponse<String> r = c.get(60, TimeUnit.SECONDS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      }
    } finally {
      open.stop(() -> {});
    }
  }

  @Test
  void httpAuthNone_oneAddressFlood_isLimited(@TempDir Path dir) throws Exception {
    ManualTime time = frozenTime();
    HttpFace open =
        startFace(
            dir,
            KeyCheck.EMPTY,
            time,
            "http_auth",
            "none",
            "rate_limit_per_second",
            "1",
            "rate_limit_burst",
            "3");
    try {
      HttpRequest request = HttpRequest.newBuilder(open.uri().resolve("/metrics")).build();
      for (int i = 0; i < 3; i++) {
        assertThat(call(request).statusCode()).isEqualTo(200);
      }
      HttpResponse<String> r = call(request);
      assertThat(r.statusCode()).isEqualTo(429);
      assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
      assertThat(errorOf(r).get("message").asText())
          .contains("address 127.0.0.1")
          .contains("rate_limit_per_second");
      time.advance(Duration.ofSeconds(1));
      assertThat(call(request).statusCode()).isEqualTo(200);
    } finally {
      open.stop(() -> {});
    }
  }

  /**
   * Requests without a valid key are limited by their address, and that budget is theirs alone: a
   * valid key from the same address still gets in, on its own budget.
   */
  @Test
  void keys_aFloodOfBadKeys_isLimitedByItsAddress_butNotAValidKeyFromIt(@TempDir Path dir)
      throws Exception {
    HttpFace limited =
        startFace(
            dir,
            new FakeKeys(),
            frozenTime(),
            "rate_limit_per_second",
            "1",
            "rate_limit_burst",
            "3");
    try {
      URI at = limited.uri().resolve("/metrics");
      HttpRequest bad = HttpRequest.newBuilder(at).header("X-API-Key", "pk_wrong").build();
      HttpRequest none = HttpRequest.newBuilder(at).build();
      for (HttpRequest r : java.util.List.of(bad, none, bad)) {
        assertThat(call(r).statusCode()).isEqualTo(401);
      }
      HttpResponse<String> r = call(bad);
      assertThat(r.statusCode()).isEqualTo(429);
      assertThat(errorOf(r).get("message").asText()).contains("without a valid key");
      assertThat(call(none).statusCode()).isEqualTo(429);
      HttpRequest good = HttpRequest.newBuilder(at).header("X-API-Key", FakeKeys.GOOD).build();
      for (int i = 0; i < 3; i++) {
        assertThat(call(good).statusCode()).as("a valid key from the same address").isEqualTo(200);
      }
      assertThat(call(good).statusCode()).as("the key's own budget").isEqualTo(429);
      HttpRequest other =
          HttpRequest.newBuilder(at).header("X-API-Key", FakeKeys.OTHER_TENANT).build();
      assertThat(call(other).statusCode())
          .as("one key's flood does not reach another key")
          .isEqualTo(200);
    } finally {
      limited.stop(() -> {});
    }
  }

  @Test
  void keysRequiredButNone_refusesToServe(@TempDir Path dir) {
    PysandboxConfig config = TestServices.config(dir, Map.of());
    assertThatThrownBy(() -> HttpFace.checkCanServe(config, KeyCheck.EMPTY))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("no API key");
            });
    HttpFace.checkCanServe(config, new FakeKeys());
    HttpFace.checkCanServe(TestServices.config(dir, Map.of("http_auth", "none")), KeyCheck.EMPTY);
  }
}

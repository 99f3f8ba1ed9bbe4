package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.api.Json;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may do what over HTTP, against the real server ({@code bin/pysandbox serve --http --port 0},
 * the default {@code http_auth=keys}, keys made with the real CLI before it starts): every route ×
 * every way of presenting a key; a revocation reaching the running server; one tenant calling every
 * id-taking route (REST and MCP) with another tenant's ids and learning nothing, changing nothing;
 * the rate limit and the per-tenant session cap of a real key (a second server on the same data
 * directory, started with a low limit and cap). One file because it is one matrix: the tables are
 * the test.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Client
class HttpTenantsIT {
  @TempDir static Path dataDir;
  @TempDir static Path workDir;
  static HttpServerProcess server;
  static HttpServerProcess limited;
  static final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  /** Keys by tenant: alice and bob for isolation, carol for the auth matrix, dave to revoke. */
  static String alice;

  static String bob;
  static String carol;
  static String dave;
  static String daveKeyId;

  /** A key revoked before the server started. */
  static String revoked;

  /** Well-formed ({@code psk_} and 43 characters) and never issued. */
  static final String NEVER_ISSUED = "psk_" + "A".repeat(21) + "b".repeat(22);

  static final String UNKNOWN_RUN = "run_00000000000000000000";
  static final String UNKNOWN_SESSION = "nobody-has-this";

  @BeforeAll
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  static void start() throws Exception {
    alice = createKey("alice").secret();
    bob = createKey("bob").secret();
    carol = createKey("carol").secret();
    IssuedKey d = createKey("dave");
    dave = d.secret();
    daveKeyId = d.id();
    IssuedKey m = createKey("mallory");
    revoked = m.secret();
    ServerProcess.Result r = ServerProcess.run(dataDir, null, "keys", "revoke", m.id());
    assertThat(r.exit()).as(r.stderr()).isZero();
    // The auth matrix alone makes more requests with one key than the default burst allows.
    server = HttpServerProcess.start(dataDir, workDir, "--set", "rate_limit_per_second=0");
    limited =
        HttpServerProcess.start(
            dataDir,
            workDir,
            "--set",
            "rate_limit_per_second=5",
            "--set",
            "rate_limit_burst=5",
            "--set",
            "max_sessions_per_tenant=2",
            "--set",
            "pool_size=0");
  }

  @AfterAll
  static void stop() {
    if (limited != null) {
      limited.close();
    }
    if (server != null) {
      server.close();
    }
  }

  // -- 1. every route × every way of presenting a key --------------------------------------------

  enum KeyKind {
    NONE,
    NEVER_ISSUED,
    MALFORMED,
    REVOKED,
    RIGHT_BEARER,
    RIGHT_X_API_KEY;

    boolean valid() {
      return this == RIGHT_BEARER || this == RIGHT_X_API_KEY;
    }

    void apply(HttpRequest.Builder b) {
      switch (this) {
        case NONE -> {}
        case NEVER_ISSUED -> b.header("Authorization", "Bearer " + HttpTenantsIT.NEVER_ISSUED);
        case MALFORMED -> b.header("Authorization", "Bearer not a key!");
        case REVOKED -> b.header("X-API-Key", revoked);
        case RIGHT_BEARER -> b.header("Authorization", "Bearer " + carol);
        case RIGHT_X_API_KEY -> b.header("X-API-Key", carol);
      }
    }
  }

  /**
   * One row of the route table.
   *
   * @param template the route as the OpenAPI document names it (below /api/v1), or null for the
   *     face's own paths
   * @param open answered without a key
   * @param withKey the statuses the route's own answer may have, with the right key
   */
  record Row(
      String method, String path, String template, Body body, boolean open, Set<Integer> withKey) {
    @Override
    public String toString() {
      return method + " " + path;
    }
  }

  /** A request body and the headers that go with it. */
  record Body(byte[] bytes, Map<String, String> headers) {
    static final Body NONE = new Body(null, Map.of());

    static Body json(String json) {
      return new Body(
          json.getBytes(StandardCharsets.UTF_8), Map.of("Content-Type", "application/json"));
    }

    static Body raw(String text) {
      return new Body(
          text.getBytes(StandardCharsets.UTF_8),
          Map.of("Content-Type", "application/octet-stream"));
    }

    static Body multipart(String filename, String text) {
      String boundary = "----pysandbox-it-boundary";
      String form =
          "--"
              + boundary
              + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
              + filename
              + "\"\r\nContent-Type: text/plain\r\n\r\n"
              + text
              + "\r\n--"
              + boundary
              + "--\r\n";
      return new Body(
          form.getBytes(StandardCharsets.UTF_8),
          Map.of("Content-Type", "multipart/form-data; boundary=" + boundary));
    }

    static Body mcp(String json) {
      return new Body(
          json.getBytes(StandardCharsets.UTF_8),
          Map.of(
              "Content-Type", "application/json", "Accept", "application/json, text/event-stream"));
    }
  }

  static final String INITIALIZE =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
          + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"it\",\"version\":\"1\"}}}";

  /** A download no host of this server's (empty) network_allow lets through. */
  static final Body DOWNLOAD =
      Body.json("{\"url\":\"http://example.com/f.txt\",\"filename\":\"got.txt\"}");

  /** Every route there is; the test checks the REST rows against the OpenAPI document. */
  static List<Row> routes(String run, String session) {
    Set<Integer> ok = Set.of(200);
    String api = "/api/v1";
    String s = api + "/sessions/" + session;
    return List.of(
        rest("POST", api + "/runs", "/runs", Body.json("{\"code\":\"1 + 1\"}"), Set.of(201)),
        rest("GET", api + "/runs", "/runs", Body.NONE, ok),
        rest("POST", api + "/validate", "/validate", Body.json("{\"code\":\"1 + 1\"}"), ok),
        rest("GET", api + "/runs/" + run, "/runs/{run_id}", Body.NONE, ok),
        rest("GET", api + "/runs/" + run + "/outputs", "/runs/{run_id}/outputs", Body.NONE, ok),
        rest("GET", api + "/runs/" + run + "/events", "/runs/{run_id}/events", Body.NONE, ok),
        rest(
            "POST", api + "/runs/" + run + "/cancel", "/runs/{run_id}/cancel", Body.json("{}"), ok),
        rest(
            "POST",
            api + "/runs/" + run + "/rerun",
            "/runs/{run_id}/rerun",
            Body.json("{}"),
            Set.of(201)),
        // The matrix's run has no parent: diff_runs' own answer without compare_to is 400.
        rest("GET", api + "/runs/" + run + "/diff", "/runs/{run_id}/diff", Body.NONE, Set.of(400)),
        // Deleting the matrix's own run would change the rows after it: an unknown run's 404.
        rest("DELETE", api + "/runs/" + UNKNOWN_RUN, "/runs/{run_id}", Body.NONE, Set.of(404)),
        rest("POST", api + "/runs/purge", "/runs/purge", Body.json("{\"older_than_days\":0}"), ok),
        rest("POST", s + "/export", "/sessions/{session_id}/export", Body.json("{}"), Set.of(200)),
        rest("GET", api + "/runs/" + run + "/files", "/runs/{run_id}/files", Body.NONE, ok),
        rest(
            "GET",
            api + "/runs/" + run + "/files/f.txt",
            "/runs/{run_id}/files/{path}",
            Body.NONE,
            ok),
        rest(
            "POST",
            api + "/sessions",
            "/sessions",
            Body.json("{\"session_id\":\"" + session + "\"}"),
            ok),
        rest("GET", api + "/sessions", "/sessions", Body.NONE, ok),
        rest("GET", s, "/sessions/{session_id}", Body.NONE, ok),
        // Closing the matrix's own session would change the rows after it: a session that does
        // not exist gives the route's own answer, 404.
        rest(
            "DELETE",
            api + "/sessions/" + UNKNOWN_SESSION,
            "/sessions/{session_id}",
            Body.NONE,
            Set.of(404)),
        rest("GET", s + "/context", "/sessions/{session_id}/context", Body.NONE, ok),
        rest("PUT", s + "/context", "/sessions/{session_id}/context", Body.json("{\"k\": 1}"), ok),
        rest("DELETE", s + "/context", "/sessions/{session_id}/context", Body.NONE, ok),
        rest("GET", s + "/files", "/sessions/{session_id}/files", Body.NONE, ok),
        rest("GET", s + "/files/f.txt", "/sessions/{session_id}/files/{path}", Body.NONE, ok),
        rest(
            "PUT",
            s + "/files/up.txt?overwrite=true",
            "/sessions/{session_id}/files/{path}",
            Body.raw("raw upload"),
            Set.of(200, 201)),
        rest(
            "POST",
            s + "/files?overwrite=true",
            "/sessions/{session_id}/files",
            Body.multipart("form.txt", "form upload"),
            Set.of(200, 201)),
        rest("GET", api + "/setup", "/setup", Body.NONE, ok),
        rest("GET", api + "/approvals", "/approvals", Body.NONE, ok),
        rest(
            "GET",
            api + "/approvals/apr_0000000000000000",
            "/approvals/{approval_id}",
            Body.NONE,
            Set.of(404)),
        // An agent's key may not decide: 403 before anything is looked up.
        rest(
            "POST",
            api + "/approvals/apr_0000000000000000/approve",
            "/approvals/{approval_id}/approve",
            Body.json("{}"),
            Set.of(403)),
        rest(
            "POST",
            api + "/approvals/apr_0000000000000000/deny",
            "/approvals/{approval_id}/deny",
            Body.json("{}"),
            Set.of(403)),
        rest("GET", api + "/security-events", "/security-events", Body.NONE, ok),
        // Under agent_provider sampling REST has no model to lend: the route's own 400.
        rest(
            "POST", api + "/agent-runs", "/agent-runs", Body.json("{\"task\":\"x\"}"), Set.of(400)),
        rest("GET", api + "/agent-runs", "/agent-runs", Body.NONE, ok),
        rest(
            "GET",
            api + "/agent-runs/agr_0000000000000000",
            "/agent-runs/{agent_run_id}",
            Body.NONE,
            Set.of(404)),
        rest(
            "POST",
            api + "/agent-runs/agr_0000000000000000/cancel",
            "/agent-runs/{agent_run_id}/cancel",
            Body.json("{}"),
            Set.of(404)),
        rest(
            "GET",
            api + "/agent-runs/agr_0000000000000000/events",
            "/agent-runs/{agent_run_id}/events",
            Body.NONE,
            Set.of(404)),
        rest("GET", api + "/environments", "/environments", Body.NONE, ok),
        // dry_run is the default: the matrix removes nothing.
        rest(
            "POST",
            api + "/environments/clean",
            "/environments/clean",
            Body.json("{\"older_than_days\":0}"),
            ok),
        // This server allows no host (network_allow is empty): the route's own answer is 403.
        rest("POST", s + "/download", "/sessions/{session_id}/download", DOWNLOAD, Set.of(403)),
        new Row("GET", api + "/openapi.json", "/openapi.json", Body.NONE, true, ok),
        own("POST", "/mcp", Body.mcp(INITIALIZE), ok),
        // Without an MCP session the SDK refuses these: its answer, not ours.
        own("GET", "/mcp", new Body(null, Map.of("Accept", "text/event-stream")), Set.of(400)),
        own("DELETE", "/mcp", Body.NONE, Set.of(400)),
        own("GET", "/metrics", Body.NONE, ok),
        new Row("GET", "/health", null, Body.NONE, true, ok),
        new Row("GET", "/ready", null, Body.NONE, true, ok));
  }

  static Row rest(String method, String path, String template, Body body, Set<Integer> withKey) {
    return new Row(method, path, template, body, false, withKey);
  }

  static Row own(String method, String path, Body body, Set<Integer> withKey) {
    return new Row(method, path, null, body, false, withKey);
  }

  @Test
  void everyRoute_answers401WithoutAValidKey_andItsOwnAnswerWithOne() throws Exception {
    URI base = server.uri();
    // carol's own session and run, so that the right key gets the routes' real answers.
    assertThat(send(base, "POST", "/api/v1/sessions", carol, json("session_id", "matrix")))
        .extracting(HttpResponse::statusCode)
        .isEqualTo(200);
    HttpResponse<String> ran =
        send(
            base,
            "POST",
            "/api/v1/runs",
            carol,
            json("session_id", "matrix", "code", "open('f.txt', 'w').write('m')"));
    assertThat(ran.statusCode()).as(ran.body()).isEqualTo(201);
    String run = Json.mapper().readTree(ran.body()).path("run_id").asText();
    List<Row> rows = routes(run, "matrix");

    // A route missing from the table is a failure, not a silent gap.
    JsonNode doc =
        Json.mapper().readTree(send(base, "GET", "/api/v1/openapi.json", null, Body.NONE).body());
    Set<String> documented = new TreeSet<>();
    for (Map.Entry<String, JsonNode> path : doc.path("paths").properties()) {
      path.getValue()
          .fieldNames()
          .forEachRemaining(m -> documented.add(m.toUpperCase(Locale.ROOT) + " " + path.getKey()));
    }
    Set<String> tabled =
        rows.stream()
            .filter(r -> r.template() != null)
            .map(r -> r.method() + " " + r.template())
            .collect(Collectors.toCollection(TreeSet::new));
    assertThat(tabled).as("the route table covers the OpenAPI document").isEqualTo(documented);

    List<String> problems = new ArrayList<>();
    for (Row row : rows) {
      for (KeyKind kind : KeyKind.values()) {
        HttpResponse<String> r = send(base, row, kind);
        String cell = row + " with " + kind + ": " + r.statusCode() + " " + abbreviate(r.body());
        if (row.open() || kind.valid()) {
          if (r.statusCode() == 401 || !row.withKey().contains(r.statusCode())) {
            problems.add(cell + " (expected " + row.withKey() + ")");
          }
        } else if (r.statusCode() != 401
            || !"Bearer".equals(r.headers().firstValue("WWW-Authenticate").orElse(null))
            || !"unauthenticated".equals(errorCode(r))) {
          problems.add(cell + " (expected 401, WWW-Authenticate: Bearer, unauthenticated)");
        }
      }
    }
    assertThat(problems)
        .as("%d routes × %d key kinds", rows.size(), KeyKind.values().length)
        .isEmpty();
  }

  // -- 2. a revocation reaches the running server ------------------------------------------------

  @Test
  void revokedWhileRunning_isRefusedByTheRunningServer() throws Exception {
    URI base = server.uri();
    assertThat(send(base, "GET", "/api/v1/sessions", dave, Body.NONE).statusCode()).isEqualTo(200);
    ServerProcess.Result r = ServerProcess.run(dataDir, null, "keys", "revoke", daveKeyId);
    assertThat(r.exit()).as(r.stderr()).isZero();
    // Within ApiKeys.REVOCATION_DELAY_MILLIS on the server's clock (ApiKeysContract moves a clock
    // to show it); here only that the running server comes to refuse it, and the figure.
    long revokedAt = System.nanoTime();
    HttpResponse<String> last =
        Await.untilChecked(
            "the running server refuses dave's revoked key",
            () -> send(base, "GET", "/api/v1/sessions", dave, Body.NONE),
            answer -> answer.statusCode() == 401);
    System.out.printf(
        "revocation seen by the running server after %d ms%n",
        (System.nanoTime() - revokedAt) / 1_000_000);
    assertThat(errorCode(last)).isEqualTo("unauthenticated");
    assertThat(last.headers().firstValue("WWW-Authenticate")).contains("Bearer");
    // MCP too.
    assertThat(send(base, "POST", "/mcp", dave, Body.mcp(INITIALIZE)).statusCode()).isEqualTo(401);
  }

  // -- 3. one tenant with another's ids ----------------------------------------------------------

  /** One call of bob's with alice's id, and the same call with an id nobody has. */
  record Probe(String method, String path, String theirId, String unknownId, Body body) {
    String unknownPath() {
      return path.replace(theirId, unknownId);
    }

    @Override
    public String toString() {
      return method + " " + path;
    }
  }

  @Test
  void anotherTenantsIds_answerAsIdsThatDoNotExist_andChangeNothing() throws Exception {
    URI base = server.uri();
    String api = "/api/v1";
    String s = api + "/sessions/alice-only";
    // alice's things.
    assertThat(send(base, "POST", api + "/sessions", alice, json("session_id", "alice-only")))
        .extracting(HttpResponse::statusCode)
        .isEqualTo(200);
    String sessionRun =
        runId(
            send(
                base,
                "POST",
                api + "/runs",
                alice,
                json(
                    "session_id",
                    "alice-only",
                    "code",
                    "x = 1\nopen('f.txt', 'w').write('alice data')\n__outputs__ = {'answer': 42}")));
    String oneShot =
        runId(
            send(
                base,
                "POST",
                api + "/runs",
                alice,
                json("code", "open('g.txt', 'w').write('one shot')\nprint('alice')")));
    assertThat(send(base, "PUT", s + "/files/up.txt", alice, Body.raw("uploaded by alice")))
        .extracting(HttpResponse::statusCode)
        .isEqualTo(201);
    assertThat(send(base, "PUT", s + "/context", alice, Body.json("{\"threshold\": 0.5}")))
        .extracting(HttpResponse::statusCode)
        .isEqualTo(200);
    String aliceMcpSession = mcpSessionOf(base, alice);

    // What alice sees before bob tries anything (reading the context is a use of the session, so
    // it comes first: the rest, last_used_at included, must then stay as it is).
    String contextBefore = send(base, "GET", s + "/context", alice, Body.NONE).body();
    // Her runs are sealed into the hash chain a moment after they end (record_sha256 is set
    // then): the view is taken once they are, so that what follows is all bob's doing.
    awaitSealed(base, sessionRun);
    awaitSealed(base, oneShot);
    Map<String, String> before = aliceView(base, sessionRun, oneShot);

    // bob's lists show nothing of alice's.
    assertThat(ids(send(base, "GET", api + "/runs?limit=100", bob, Body.NONE), "runs", "run_id"))
        .doesNotContain(sessionRun, oneShot);
    assertThat(ids(send(base, "GET", api + "/sessions", bob, Body.NONE), "sessions", "session_id"))
        .doesNotContain("alice-only");
    assertThat(
            ids(
                send(base, "GET", api + "/runs?session_id=alice-only", bob, Body.NONE),
                "runs",
                "run_id"))
        .isEmpty();

    // A security event of alice's (a one-shot run stopped by its timeout) is hers alone.
    String stopped =
        runId(
            send(
                base,
                "POST",
                api + "/runs",
                alice,
                json("code", "while True: pass", "timeout_seconds", 1)));
    assertThat(
            ids(
                send(
                    base, "GET", api + "/security-events?kind=limit_stopped_run", alice, Body.NONE),
                "events",
                "run_id"))
        .contains(stopped);
    List<String> alicesEvents =
        ids(send(base, "GET", api + "/security-events", alice, Body.NONE), "events", "event_id");
    assertThat(
            ids(send(base, "GET", api + "/security-events", bob, Body.NONE), "events", "event_id"))
        .doesNotContainAnyElementsOf(alicesEvents);
    assertThat(
            ids(
                send(base, "GET", api + "/security-events?session_id=alice-only", bob, Body.NONE),
                "events",
                "event_id"))
        .isEmpty();
    HttpResponse<String> theirCursor =
        send(base, "GET", api + "/security-events?cursor=" + alicesEvents.get(0), bob, Body.NONE);
    HttpResponse<String> noCursor =
        send(base, "GET", api + "/security-events?cursor=evt_0000000000000000", bob, Body.NONE);
    assertThat(theirCursor.statusCode()).as(theirCursor.body()).isEqualTo(400);
    assertThat(
            sameButIds(
                theirCursor.body(), alicesEvents.get(0), noCursor.body(), "evt_0000000000000000"))
        .as(theirCursor.body() + " vs " + noCursor.body())
        .isTrue();

    // A run of alice's still going: bob cannot cancel it.
    CompletableFuture<HttpResponse<String>> live =
        CompletableFuture.supplyAsync(
            () ->
                sendUnchecked(
                    base,
                    "POST",
                    api + "/runs",
                    alice,
                    json("code", "import time\ntime.sleep(3)\nprint('not cancelled')")));
    String liveRun = awaitRunning(base);

    List<Probe> probes = new ArrayList<>();
    for (String run : List.of(liveRun, sessionRun, oneShot)) {
      String r = api + "/runs/" + run;
      probes.add(new Probe("POST", r + "/cancel", run, UNKNOWN_RUN, Body.json("{}")));
      probes.add(new Probe("GET", r, run, UNKNOWN_RUN, Body.NONE));
      probes.add(new Probe("GET", r + "?include_code=true", run, UNKNOWN_RUN, Body.NONE));
      probes.add(new Probe("GET", r + "/outputs", run, UNKNOWN_RUN, Body.NONE));
      probes.add(new Probe("GET", r + "/events", run, UNKNOWN_RUN, Body.NONE));
      probes.add(new Probe("GET", r + "/files", run, UNKNOWN_RUN, Body.NONE));
      probes.add(new Probe("GET", r + "/files/f.txt", run, UNKNOWN_RUN, Body.NONE));
      probes.add(new Probe("GET", r + "/files/g.txt", run, UNKNOWN_RUN, Body.NONE));
      probes.add(new Probe("HEAD", r + "/files/f.txt", run, UNKNOWN_RUN, Body.NONE));
      probes.add(new Probe("POST", r + "/rerun", run, UNKNOWN_RUN, Body.json("{}")));
      probes.add(new Probe("GET", r + "/diff?compare_to=" + oneShot, run, UNKNOWN_RUN, Body.NONE));
      probes.add(
          new Probe("GET", r + "?include_notebook_source=true", run, UNKNOWN_RUN, Body.NONE));
      probes.add(new Probe("DELETE", r, run, UNKNOWN_RUN, Body.NONE));
    }
    probes.add(new Probe("POST", s + "/export", "alice-only", UNKNOWN_SESSION, Body.json("{}")));
    String sid = "alice-only";
    probes.add(new Probe("GET", s, sid, UNKNOWN_SESSION, Body.NONE));
    probes.add(new Probe("GET", s + "/context", sid, UNKNOWN_SESSION, Body.NONE));
    probes.add(new Probe("GET", s + "/context?names=x", sid, UNKNOWN_SESSION, Body.NONE));
    probes.add(new Probe("PUT", s + "/context", sid, UNKNOWN_SESSION, Body.json("{\"x\": 99}")));
    probes.add(new Probe("DELETE", s + "/context", sid, UNKNOWN_SESSION, Body.NONE));
    probes.add(new Probe("GET", s + "/files", sid, UNKNOWN_SESSION, Body.NONE));
    probes.add(new Probe("GET", s + "/files/f.txt", sid, UNKNOWN_SESSION, Body.NONE));
    probes.add(new Probe("GET", s + "/files/up.txt", sid, UNKNOWN_SESSION, Body.NONE));
    probes.add(new Probe("HEAD", s + "/files/up.txt", sid, UNKNOWN_SESSION, Body.NONE));
    probes.add(new Probe("DELETE", s, sid, UNKNOWN_SESSION, Body.NONE));

    List<String> problems = new ArrayList<>();
    for (Probe p : probes) {
      HttpResponse<String> theirs = send(base, p.method(), p.path(), bob, p.body());
      if (p.theirId().equals(liveRun) && p.method().equals("POST")) {
        assertThat(runStatus(base, liveRun))
            .as("bob's cancel came while alice's run was still going")
            .isEqualTo("running");
      }
      HttpResponse<String> unknown = send(base, p.method(), p.unknownPath(), bob, p.body());
      String cell = p + ": " + theirs.statusCode() + " " + abbreviate(theirs.body());
      if (theirs.statusCode() != 404
          || (!p.method().equals("HEAD") && !"not_found".equals(errorCode(theirs)))) {
        problems.add(cell + " (expected 404 not_found)");
      } else if (unknown.statusCode() != theirs.statusCode()
          || !sameButIds(theirs.body(), p.theirId(), unknown.body(), p.unknownId())) {
        problems.add(
            cell
                + " but an unknown id: "
                + unknown.statusCode()
                + " "
                + abbreviate(unknown.body()));
      }
    }

    // An upload (and a download) names a session to use or create, as run_python does: bob's
    // upload makes bob's own session of that name, just as it does for a name nobody has, and
    // leaves alice's alone; bob's download is refused alike for both names (no host is allowed).
    String fresh = "nobody-had-this";
    List<Probe> uploads =
        List.of(
            new Probe("PUT", s + "/files/up.txt?overwrite=true", sid, fresh, Body.raw("bob's")),
            new Probe(
                "POST",
                s + "/files?overwrite=true",
                sid,
                fresh,
                Body.multipart("up.txt", "bob's, by form")),
            new Probe("POST", s + "/download", sid, fresh, DOWNLOAD));
    for (Probe p : uploads) {
      HttpResponse<String> theirs = send(base, p.method(), p.path(), bob, p.body());
      HttpResponse<String> unknown = send(base, p.method(), p.unknownPath(), bob, p.body());
      if (theirs.statusCode() != unknown.statusCode()
          || !sameButIds(theirs.body(), sid, unknown.body(), fresh)) {
        problems.add(
            p
                + ": "
                + theirs.statusCode()
                + " "
                + abbreviate(theirs.body())
                + " but a new name: "
                + unknown.statusCode()
                + " "
                + abbreviate(unknown.body()));
      }
    }
    assertThat(problems)
        .as("%d calls by bob with alice's ids", probes.size() + uploads.size())
        .isEmpty();

    // The live run ran to its end, uncancelled.
    JsonNode liveDone = Json.mapper().readTree(live.get(60, TimeUnit.SECONDS).body());
    assertThat(liveDone.path("status").asText()).as(liveDone.toString()).isEqualTo("succeeded");
    assertThat(liveDone.path("stdout").asText()).isEqualTo("not cancelled\n");

    // Nothing of alice's changed: not a file, not a run, not even her session's last use.
    assertThat(aliceView(base, sessionRun, oneShot)).isEqualTo(before);
    assertThat(send(base, "GET", s + "/context", alice, Body.NONE).body()).isEqualTo(contextBefore);
    assertThat(contextBefore).contains("threshold");
    HttpResponse<String> x =
        send(base, "POST", api + "/runs", alice, json("session_id", "alice-only", "code", "x"));
    assertThat(Json.mapper().readTree(x.body()).path("result").path("text/plain").asText())
        .as(x.body())
        .isEqualTo("1");
    assertThat(mcpWithSession(base, "POST", alice, aliceMcpSession).statusCode()).isEqualTo(200);

    // bob's session "alice-only" is bob's: closing it leaves alice's open.
    assertThat(send(base, "DELETE", s, bob, Body.NONE).statusCode()).isEqualTo(200);
    assertThat(send(base, "DELETE", api + "/sessions/" + fresh, bob, Body.NONE).statusCode())
        .isEqualTo(200);
    assertThat(send(base, "GET", s, alice, Body.NONE).statusCode()).isEqualTo(200);
    assertThat(send(base, "GET", s + "/files/up.txt", alice, Body.NONE).body())
        .isEqualTo("uploaded by alice");

    // alice's lists show nothing of bob's.
    String bobsRun = runId(send(base, "POST", api + "/runs", bob, json("code", "print('bob')")));
    assertThat(ids(send(base, "GET", api + "/runs?limit=100", alice, Body.NONE), "runs", "run_id"))
        .contains(sessionRun, oneShot, liveRun)
        .doesNotContain(bobsRun);
    assertThat(ids(send(base, "GET", api + "/runs?limit=100", bob, Body.NONE), "runs", "run_id"))
        .contains(bobsRun)
        .doesNotContain(sessionRun, oneShot, liveRun);
    assertThat(
            ids(send(base, "GET", api + "/sessions", alice, Body.NONE), "sessions", "session_id"))
        .doesNotContain(fresh);
  }

  /** Everything alice can read of her things without using her session, by what she asked. */
  private static Map<String, String> aliceView(URI base, String sessionRun, String oneShot)
      throws Exception {
    Map<String, String> view = new LinkedHashMap<>();
    String api = "/api/v1";
    for (String path :
        List.of(
            api + "/sessions/alice-only",
            api + "/sessions/alice-only/files",
            api + "/sessions/alice-only/files/f.txt",
            api + "/sessions/alice-only/files/up.txt",
            api + "/runs/" + sessionRun + "?include_code=true",
            api + "/runs/" + sessionRun + "/outputs",
            api + "/runs/" + sessionRun + "/files",
            api + "/runs/" + sessionRun + "/files/f.txt",
            api + "/runs/" + oneShot + "?include_code=true",
            api + "/runs/" + oneShot + "/files/g.txt")) {
      HttpResponse<String> r = send(base, "GET", path, alice, Body.NONE);
      view.put(path, r.statusCode() + " " + r.body());
    }
    return view;
  }

  private static void awaitSealed(URI base, String runId) throws Exception {
    Await.untilChecked(
        "run " + runId + " sealed",
        () ->
            Json.mapper()
                .readTree(send(base, "GET", "/api/v1/runs/" + runId, alice, Body.NONE).body()),
        run -> run.path("record_sha256").isTextual());
  }

  private static String runStatus(URI base, String runId) throws Exception {
    return Json.mapper()
        .readTree(send(base, "GET", "/api/v1/runs/" + runId, alice, Body.NONE).body())
        .path("status")
        .asText();
  }

  /** alice's run that is running now, once the store says so. */
  private static String awaitRunning(URI base) throws Exception {
    return Await.untilChecked(
            "alice's run shows as running",
            () ->
                ids(
                    send(base, "GET", "/api/v1/runs?status=running", alice, Body.NONE),
                    "runs",
                    "run_id"),
            running -> !running.isEmpty())
        .get(0);
  }

  @Test
  void sameSessionIdInTwoTenants_isTwoSessions() throws Exception {
    URI base = server.uri();
    String api = "/api/v1";
    String s = api + "/sessions/shared-name";
    HttpResponse<String> a =
        send(
            base, "POST", api + "/runs", alice, json("session_id", "shared-name", "code", "x = 1"));
    HttpResponse<String> b =
        send(base, "POST", api + "/runs", bob, json("session_id", "shared-name", "code", "x = 2"));
    assertThat(a.statusCode()).as(a.body()).isEqualTo(201);
    assertThat(b.statusCode()).as(b.body()).isEqualTo(201);
    assertThat(send(base, "PUT", s + "/files/who.txt", alice, Body.raw("alice")).statusCode())
        .isEqualTo(201);
    assertThat(send(base, "PUT", s + "/files/who.txt", bob, Body.raw("bob")).statusCode())
        .as("a new file in bob's session, not a replaced one in alice's")
        .isEqualTo(201);
    for (var who : List.of(Map.entry(alice, "1"), Map.entry(bob, "2"))) {
      String key = who.getKey();
      HttpResponse<String> r =
          send(base, "POST", api + "/runs", key, json("session_id", "shared-name", "code", "x"));
      assertThat(Json.mapper().readTree(r.body()).path("result").path("text/plain").asText())
          .as(r.body())
          .isEqualTo(who.getValue());
      HttpResponse<String> ctx = send(base, "GET", s + "/context?names=x", key, Body.NONE);
      assertThat(
              Json.mapper().readTree(ctx.body()).path("variables").path("x").path("value").asText())
          .as(ctx.body())
          .isEqualTo(who.getValue());
      assertThat(send(base, "GET", s + "/files/who.txt", key, Body.NONE).body())
          .isEqualTo(key.equals(alice) ? "alice" : "bob");
    }
    assertThat(send(base, "DELETE", s, bob, Body.NONE).statusCode()).isEqualTo(200);
    assertThat(send(base, "GET", s, alice, Body.NONE).statusCode())
        .as("closing bob's shared-name leaves alice's open")
        .isEqualTo(200);
  }

  @Test
  void overMcp_anotherTenantsIds_areNotFound_asIdsThatDoNotExist() throws Exception {
    URI base = server.uri();
    String api = "/api/v1";
    send(base, "POST", api + "/sessions", alice, json("session_id", "alice-mcp"));
    String run =
        runId(
            send(
                base,
                "POST",
                api + "/runs",
                alice,
                json("session_id", "alice-mcp", "code", "y = 7\nopen('f.txt', 'w').write('a')")));
    record Call(
        String tool, String idName, String theirId, String unknownId, Map<String, Object> more) {
      Map<String, Object> args(String id) {
        Map<String, Object> args = new LinkedHashMap<>(more);
        args.put(idName, id);
        return args;
      }
    }
    String sid = "alice-mcp";
    List<Call> calls =
        List.of(
            new Call("get_run", "run_id", run, UNKNOWN_RUN, Map.of()),
            new Call("get_run_outputs", "run_id", run, UNKNOWN_RUN, Map.of()),
            new Call("cancel_run", "run_id", run, UNKNOWN_RUN, Map.of()),
            new Call("list_artifacts", "run_id", run, UNKNOWN_RUN, Map.of()),
            new Call("read_artifact", "run_id", run, UNKNOWN_RUN, Map.of("path", "f.txt")),
            new Call("list_artifacts", "session_id", sid, UNKNOWN_SESSION, Map.of()),
            new Call("read_artifact", "session_id", sid, UNKNOWN_SESSION, Map.of("path", "f.txt")),
            new Call("get_context", "session_id", sid, UNKNOWN_SESSION, Map.of()),
            new Call(
                "set_context",
                "session_id",
                sid,
                UNKNOWN_SESSION,
                Map.of("values", Map.of("y", 0))),
            new Call("clear_context", "session_id", sid, UNKNOWN_SESSION, Map.of()),
            new Call("close_session", "session_id", sid, UNKNOWN_SESSION, Map.of()));
    List<String> problems = new ArrayList<>();
    try (McpSyncClient client = mcpClient(base, bob)) {
      for (Call c : calls) {
        CallToolResult theirs = callTool(client, c.tool(), c.args(c.theirId()));
        CallToolResult unknown = callTool(client, c.tool(), c.args(c.unknownId()));
        String cell = c.tool() + " " + c.args(c.theirId()) + ": " + theirs.structuredContent();
        if (!Boolean.TRUE.equals(theirs.isError()) || !"not_found".equals(mcpErrorCode(theirs))) {
          problems.add(cell + " (expected an error result, not_found)");
        } else if (!sameButIds(
            Json.write(theirs.structuredContent()),
            c.theirId(),
            Json.write(unknown.structuredContent()),
            c.unknownId())) {
          problems.add(cell + " but an unknown id: " + unknown.structuredContent());
        }
      }
    }
    assertThat(problems).as("%d MCP calls by bob with alice's ids", calls.size()).isEmpty();
    HttpResponse<String> y =
        send(base, "POST", api + "/runs", alice, json("session_id", sid, "code", "y"));
    assertThat(Json.mapper().readTree(y.body()).path("result").path("text/plain").asText())
        .as("alice's session kept its variable: %s", y.body())
        .isEqualTo("7");
    send(base, "DELETE", api + "/sessions/" + sid, alice, Body.NONE);
  }

  /** Regression: another tenant's MCP session id was told apart from one that does not exist. */
  @Test
  void anotherTenantsMcpSession_isAnsweredAsOneThatDoesNotExist() throws Exception {
    URI base = server.uri();
    String theirs = mcpSessionOf(base, alice);
    String unknown = "0b8e5a1c-1111-2222-3333-444455556666";
    List<String> problems = new ArrayList<>();
    for (String method : List.of("POST", "GET", "DELETE")) {
      Reply a = mcpWithSession(base, method, bob, theirs);
      Reply b = mcpWithSession(base, method, bob, unknown);
      if (a.statusCode() != 404
          || b.statusCode() != 404
          || !sameButIds(a.body(), theirs, b.body(), unknown)) {
        problems.add(
            method
                + " /mcp: alice's session "
                + a.statusCode()
                + " "
                + abbreviate(a.body())
                + ", an unknown one "
                + b.statusCode()
                + " "
                + abbreviate(b.body()));
      }
    }
    assertThat(problems).isEmpty();
    assertThat(mcpWithSession(base, "POST", alice, theirs).statusCode())
        .as("bob's DELETE did not end alice's MCP session")
        .isEqualTo(200);
  }

  // -- 4. and 5. the rate limit and the per-tenant session cap ----------------------------------

  @Test
  void rateLimit_refusesOneKeyPastItsBurst_withRetryAfter_andNotAnotherKey() throws Exception {
    URI base = limited.uri();
    List<HttpResponse<String>> answers = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      answers.add(send(base, "GET", "/api/v1/runs?limit=1", carol, Body.NONE));
    }
    List<Integer> statuses = answers.stream().map(HttpResponse::statusCode).toList();
    assertThat(statuses).as("burst 5 at 5/s").contains(200, 429).containsOnly(200, 429);
    assertThat(statuses.subList(0, 5)).as("the burst").containsOnly(200);
    for (HttpResponse<String> r : answers) {
      if (r.statusCode() == 429) {
        assertThat(errorCode(r)).isEqualTo("rate_limited");
        assertThat(r.headers().firstValue("Retry-After"))
            .hasValueSatisfying(v -> assertThat(Integer.parseInt(v)).isPositive());
      }
    }
    assertThat(send(base, "GET", "/api/v1/runs?limit=1", bob, Body.NONE).statusCode())
        .as("another key has its own budget")
        .isEqualTo(200);
  }

  @Test
  void sessionCap_refusesATenantsThirdSession_whileAnotherTenantStillOpensOne() throws Exception {
    URI base = limited.uri();
    for (String id : List.of("cap-1", "cap-2")) {
      HttpResponse<String> r =
          send(base, "POST", "/api/v1/sessions", alice, json("session_id", id));
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }
    HttpResponse<String> third =
        send(base, "POST", "/api/v1/sessions", alice, json("session_id", "cap-3"));
    assertThat(third.statusCode()).as(third.body()).isEqualTo(429);
    assertThat(errorCode(third)).isEqualTo("max_sessions");
    assertThat(third.body()).contains("max_sessions_per_tenant");
    HttpResponse<String> bobs =
        send(base, "POST", "/api/v1/sessions", bob, json("session_id", "cap-1"));
    assertThat(bobs.statusCode()).as(bobs.body()).isEqualTo(200);
  }

  // -- helpers -----------------------------------------------------------------------------------

  /** A key as {@code keys create} gives it: the secret on stdout, its id on stderr. */
  record IssuedKey(String secret, String id) {}

  static IssuedKey createKey(String tenant) throws Exception {
    ServerProcess.Result r = ServerProcess.run(dataDir, null, "keys", "create", "--tenant", tenant);
    assertThat(r.exit()).as(r.stderr()).isZero();
    String id = r.stderr().replaceAll("(?s).*key (key_[0-9a-f]{12}) .*", "$1");
    assertThat(id).matches("key_[0-9a-f]{12}");
    return new IssuedKey(r.stdout().strip(), id);
  }

  static Body json(Object... pairs) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      m.put((String) pairs[i], pairs[i + 1]);
    }
    return Body.json(Json.write(m));
  }

  static Map<String, Object> with(Map<String, Object> m, String key, Object value) {
    Map<String, Object> copy = new LinkedHashMap<>(m);
    copy.put(key, value);
    return copy;
  }

  static HttpResponse<String> send(URI base, Row row, KeyKind kind) throws Exception {
    HttpRequest.Builder b = request(base, row.method(), row.path(), row.body());
    kind.apply(b);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A request with {@code key} as a bearer token (none when null). */
  static HttpResponse<String> send(URI base, String method, String path, String key, Body body)
      throws Exception {
    HttpRequest.Builder b = request(base, method, path, body);
    if (key != null) {
      b.header("Authorization", "Bearer " + key);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> sendUnchecked(
      URI base, String method, String path, String key, Body body) {
    try {
      return send(base, method, path, key, body);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static HttpRequest.Builder request(URI base, String method, String path, Body body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(base.resolve(path))
            .timeout(Duration.ofSeconds(60))
            .method(
                method,
                body.bytes() == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(body.bytes()));
    body.headers().forEach(b::header);
    return b;
  }

  static String errorCode(HttpResponse<String> r) {
    try {
      return Json.mapper().readTree(r.body()).path("error").path("code").asText(null);
    } catch (Exception e) {
      return null;
    }
  }

  static String runId(HttpResponse<String> r) throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    return Json.mapper().readTree(r.body()).path("run_id").asText();
  }

  static List<String> ids(HttpResponse<String> r, String list, String field) throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    List<String> ids = new ArrayList<>();
    Json.mapper().readTree(r.body()).path(list).forEach(n -> ids.add(n.path(field).asText()));
    return ids;
  }

  /** Two answers that differ at most in the id each names. */
  static boolean sameButIds(String a, String aId, String b, String bId) {
    return a.replace(aId, "ID").equals(b.replace(bId, "ID"));
  }

  static String abbreviate(String body) {
    return body.length() > 200 ? body.substring(0, 200) + "..." : body;
  }

  // -- MCP ---------------------------------------------------------------------------------------

  static McpSyncClient mcpClient(URI base, String key) {
    HttpClientStreamableHttpTransport transport =
        HttpClientStreamableHttpTransport.builder(base.toString())
            .endpoint("/mcp")
            .addHttpRequestCustomizer(
                (builder, method, uri, body, context) ->
                    builder.header("Authorization", "Bearer " + key))
            .build();
    McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build();
    client.initialize();
    return client;
  }

  static CallToolResult callTool(McpSyncClient client, String tool, Map<String, Object> args) {
    return client.callTool(CallToolRequest.builder(tool).arguments(args).build());
  }

  static String mcpErrorCode(CallToolResult r) {
    return r.structuredContent() instanceof Map<?, ?> m && m.get("error") instanceof Map<?, ?> e
        ? String.valueOf(e.get("code"))
        : null;
  }

  /** A new MCP session of {@code key}'s tenant, opened over raw HTTP; its id. */
  static String mcpSessionOf(URI base, String key) throws Exception {
    HttpResponse<String> r = send(base, "POST", "/mcp", key, Body.mcp(INITIALIZE));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    String session = r.headers().firstValue("Mcp-Session-Id").orElseThrow();
    HttpRequest.Builder b =
        request(
            base,
            "POST",
            "/mcp",
            Body.mcp("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
    b.header("Authorization", "Bearer " + key).header("Mcp-Session-Id", session);
    b.header("Mcp-Protocol-Version", "2025-06-18");
    assertThat(http.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(202);
    return session;
  }

  /** A status and a body. */
  record Reply(int statusCode, String body) {}

  /** POST tools/list, GET the stream (only its status and error body) or DELETE, in a session. */
  static Reply mcpWithSession(URI base, String method, String key, String session)
      throws Exception {
    Body body =
        switch (method) {
          case "POST" -> Body.mcp("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
          case "GET" -> new Body(null, Map.of("Accept", "text/event-stream"));
          default -> Body.NONE;
        };
    HttpRequest.Builder b = request(base, method, "/mcp", body);
    b.header("Authorization", "Bearer " + key)
        .header("Mcp-Session-Id", session)
        .header("Mcp-Protocol-Version", "2025-06-18");
    // A stream that opens does not end: its status is all there is to see.
    HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream in = r.body()) {
      return new Reply(
          r.statusCode(),
          r.statusCode() == 200 ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }
}

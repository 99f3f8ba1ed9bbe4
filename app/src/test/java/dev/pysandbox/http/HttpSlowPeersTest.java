package dev.pysandbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TrickleOrigin;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The red team's attacks on the HTTP face by one tenant under its rate limit (issue 24, items 4-6),
 * with real slow peers on loopback and bounded counts: long polls, slow request bodies, slow
 * uploads, and downloads from an origin that sends a byte a second. While the attack holds all that
 * the caps let one key hold, {@code /health}, another tenant and the same key's short requests
 * still answer; the key's next long call gets 429 {@code rate_limited} with {@code Retry-After};
 * once the attacker goes away (or the minimum data rate cuts it off) every slot is free again.
 * Timings are not asserted (they are measured in docs/DESIGN.md); each answer has a generous client
 * timeout.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class HttpSlowPeersTest {
  static final int MAX_REQUESTS = 6;
  static final int MAX_LONG = 3;
  static final String GOOD_BUCKET = RateLimiter.forKey("key-good");

  /**
   * The slow-peer guard's window here: short, so that a cut-off comes soon, but long enough that a
   * loaded machine pausing the trickling thread (or the server's reading one) for a second or two
   * does not make a body sent at four times the minimum look slow.
   */
  static final Duration GRACE = Duration.ofSeconds(4);

  @TempDir static Path dataDir;
  TrickleOrigin origin;
  RestFace http;
  final List<Socket> attack = new ArrayList<>();
  final ScheduledExecutorService trickler = Executors.newSingleThreadScheduledExecutor();
  final List<ScheduledFuture<?>> trickles = new ArrayList<>();

  /** The MCP session {@link #raw} requests to /mcp go to. */
  volatile String mcpSession;

  /** Bytes a second the attacking sockets send ({@link #trickle}). */
  volatile int pace = 1;

  @BeforeAll
  void start() throws Exception {
    origin = new TrickleOrigin();
    http =
        RestFace.start(
            dataDir,
            Map.of(
                "http_auth",
                "keys",
                "http_max_requests_per_key",
                Integer.toString(MAX_REQUESTS),
                "http_max_long_calls_per_key",
                Integer.toString(MAX_LONG),
                "pool_size",
                "0",
                "index_url",
                "",
                "tiers_allowed",
                "basic,network",
                "network_allow",
                "127.0.0.1:" + origin.port(),
                "network_allow_private",
                "true"),
            f -> f.slowGrace(GRACE));
    for (String s : List.of("lp", "mcp", "up0", "up1", "up2", "dl", "rd")) {
      assertThat(call("POST", "/api/v1/sessions", FakeKeys.GOOD, "{\"session_id\":\"" + s + "\"}"))
          .extracting(HttpResponse::statusCode)
          .isIn(200, 201);
    }
  }

  @AfterEach
  void endTheAttack() throws IOException {
    trickles.forEach(t -> t.cancel(false));
    trickles.clear();
    for (Socket s : attack) {
      s.close();
    }
    attack.clear();
  }

  @AfterAll
  void stop() {
    trickler.shutdownNow();
    if (http != null) {
      http.close();
    }
    if (origin != null) {
      origin.close();
    }
  }

  // -- the attacks --------------------------------------------------------------------------

  /** Item 5: GET /runs/{id}?wait_seconds=60, many at once from one key. */
  @Test
  void longPolls_holdOnlyTheKeysLongCallSlots_andFreeThemWhenTheClientGoes() throws Exception {
    JsonNode run =
        RestFace.tree(
            call(
                "POST",
                "/api/v1/runs",
                FakeKeys.GOOD,
                "{\"code\":\"import time\\ntime.sleep(600)\",\"session_id\":\"lp\","
                    + "\"async_mode\":true}"));
    String runId = run.path("run_id").asText();
    assertThat(runId).as(run.toString()).isNotEmpty();
    String poll = "/api/v1/runs/" + runId + "?wait_seconds=60";
    for (int i = 0; i < MAX_LONG; i++) {
      attack.add(raw("GET", poll, FakeKeys.GOOD, null, 0, new byte[0]));
    }
    Await.until("the polls hold the key's long calls", this::longHeld, n -> n == MAX_LONG);

    assertRefusedLongCall(call("GET", poll, FakeKeys.GOOD, null));
    assertTheOthersAnswer("/api/v1/runs/" + runId);

    endTheAttack(); // the attacker disconnects: its waits end, not after 60 s
    assertAllFree();
    assertThat(call("GET", "/api/v1/runs/" + runId + "?wait_seconds=1", FakeKeys.GOOD, null))
        .extracting(HttpResponse::statusCode)
        .isEqualTo(200);
    call("POST", "/api/v1/runs/" + runId + "/cancel", FakeKeys.GOOD, null);
  }

  /** Item 6: authenticated PUTs of a file that send a byte every few seconds. */
  @Test
  void slowUploads_holdOnlyTheKeysLongCallSlots_andAreCutOffUnderTheMinimumRate() throws Exception {
    for (int i = 0; i < MAX_LONG; i++) {
      attack.add(
          raw(
              "PUT",
              "/api/v1/sessions/up" + i + "/files/slow.txt",
              FakeKeys.GOOD,
              "application/octet-stream",
              1 << 20,
              new byte[] {'x'}));
    }
    pace = 4096; // held at first: over the minimum, so only the caps are at play
    trickle();
    Await.until("the uploads hold the key's long calls", this::longHeld, n -> n == MAX_LONG);

    assertRefusedLongCall(
        call("PUT", "/api/v1/sessions/up0/files/more.txt", FakeKeys.GOOD, "data"));
    assertTheOthersAnswer("/api/v1/sessions/up0");

    // The attack proper: a byte a second each, which the idle timeout never ends. No disconnect:
    // the server cuts the slow bodies off itself.
    pace = 1;
    assertAllFree();
    for (Socket s : attack) {
      assertClosedByTheServer(s);
    }
    assertThat(call("PUT", "/api/v1/sessions/up0/files/ok.txt", FakeKeys.GOOD, "data"))
        .extracting(HttpResponse::statusCode)
        .isEqualTo(201);
  }

  /** Item 6's kin: slow JSON bodies are requests in flight, capped per key, and cut off too. */
  @Test
  void slowBodies_holdAtMostTheKeysRequestCap_andAreCutOffUnderTheMinimumRate() throws Exception {
    for (int i = 0; i < MAX_REQUESTS; i++) {
      attack.add(
          raw(
              "POST",
              "/api/v1/runs",
              FakeKeys.GOOD,
              "application/json",
              256 << 10,
              "{".getBytes()));
    }
    // Held over the minimum rate at first, so that only the cap is at play however long a loaded
    // machine takes to count them (a body that sends nothing is cut off after the GRACE).
    pace = 4096;
    trickle();
    Await.until(
        "the bodies hold the key's requests",
        () -> http.face.slots().requests(GOOD_BUCKET),
        n -> n == MAX_REQUESTS);

    HttpResponse<String> excess = call("GET", "/api/v1/sessions", FakeKeys.GOOD, null);
    assertThat(excess.statusCode()).isEqualTo(429);
    assertThat(excess.headers().firstValue("Retry-After")).isPresent();
    assertThat(RestFace.tree(excess).path("error").path("code").asText()).isEqualTo("rate_limited");
    assertThat(RestFace.tree(excess).path("error").path("message").asText())
        .contains("http_max_requests_per_key " + MAX_REQUESTS);
    assertThat(call("GET", "/health", null, null).statusCode()).isEqualTo(200);
    assertThat(call("GET", "/api/v1/sessions", FakeKeys.OTHER_TENANT, null).statusCode())
        .isEqualTo(200);

    pace = 1;
    assertAllFree();
    for (Socket s : attack) {
      assertClosedByTheServer(s);
    }
  }

  /**
   * Item 4: download_file from an allowed origin that never ends. It sends 4 KiB a second, over the
   * minimum rate, so that what holds here is the caps and the disconnect alone; one that sends a
   * byte a second is cut off by the minimum rate (EgressProxyTest).
   */
  @Test
  void tricklingDownloads_holdOnlyTheKeysLongCallSlots_andEndWhenTheClientGoes() throws Exception {
    byte[] body =
        ("{\"url\":\"" + origin.url("/trickle?per_second=4096") + "\",\"filename\":\"t.bin\"}")
            .getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < MAX_LONG; i++) {
      attack.add(
          raw(
              "POST",
              "/api/v1/sessions/dl/download",
              FakeKeys.GOOD,
              "application/json",
              body.length,
              body));
    }
    Await.until("the downloads hold the key's long calls", this::longHeld, n -> n == MAX_LONG);
    Await.until("the origin trickles to each", origin::trickling, n -> n == MAX_LONG);

    assertRefusedLongCall(
        call("POST", "/api/v1/sessions/dl/download", FakeKeys.GOOD, new String(body)));
    assertTheOthersAnswer("/api/v1/sessions/dl");

    endTheAttack(); // the client's disconnect ends its download, and the fetch from the origin
    assertAllFree();
    Await.until("the origin is let go", origin::trickling, n -> n == 0);
    HttpResponse<String> fast =
        call(
            "POST",
            "/api/v1/sessions/dl/download",
            FakeKeys.GOOD,
            "{\"url\":\"" + origin.url("/fast") + "\",\"filename\":\"f.txt\"}");
    assertThat(fast.statusCode()).as(fast.body()).isEqualTo(200);
  }

  /**
   * The same fault the other way: a client that takes a file's answer a byte a second holds the
   * thread that writes it. After a burst (the socket buffers take megabytes at once) the server's
   * write waits, and the window it measures is under the minimum: the connection is cut off.
   */
  @Test
  void aClientTakingAnAnswerAByteASecond_isCutOff_andItsSlotFreed() throws Exception {
    byte[] big = new byte[16 << 20];
    HttpRequest.Builder put =
        http.request("/api/v1/sessions/rd/files/big.bin")
            .timeout(Duration.ofSeconds(60))
            .header("Authorization", "Bearer " + FakeKeys.GOOD)
            .header("Content-Type", "application/octet-stream")
            .PUT(HttpRequest.BodyPublishers.ofByteArray(big));
    assertThat(http.send(put).statusCode()).isIn(200, 201);
    Socket s = new Socket();
    s.setReceiveBufferSize(4096);
    s.connect(new java.net.InetSocketAddress("127.0.0.1", http.port()));
    s.getOutputStream()
        .write(
            ("GET /api/v1/sessions/rd/files/big.bin HTTP/1.1\r\nHost: 127.0.0.1:"
                    + http.port()
                    + "\r\nAuthorization: Bearer "
                    + FakeKeys.GOOD
                    + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
    attack.add(s);
    Await.until("the answer holds a long call", this::longHeld, n -> n == 1);
    long[] taken = {0};
    boolean[] ended = {false};
    trickles.add(
        trickler.scheduleAtFixedRate(
            () -> {
              try {
                if (!ended[0] && s.getInputStream().read() < 0) {
                  ended[0] = true;
                } else {
                  taken[0]++;
                }
              } catch (IOException e) {
                ended[0] = true;
              }
            },
            1,
            1,
            TimeUnit.SECONDS));
    assertAllFree();
    assertThat(taken[0]).as("bytes taken before the cut").isLessThan(big.length);
  }

  /**
   * Item 5 over MCP: tools/call get_run with wait_seconds holds a thread just the same, and takes a
   * slot of the same cap; an MCP call stream outlives its connection (it may be resumed), so the
   * calls end when the client cancels them or ends its session.
   */
  @Test
  void mcpLongPolls_takeTheSameSlots_andEndWithTheSession() throws Exception {
    String runId =
        RestFace.tree(
                call(
                    "POST",
                    "/api/v1/runs",
                    FakeKeys.GOOD,
                    "{\"code\":\"import time\\ntime.sleep(600)\",\"session_id\":\"mcp\","
                        + "\"async_mode\":true}"))
            .path("run_id")
            .asText();
    HttpResponse<String> init =
        mcp(
            null,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
    mcp(session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    mcpSession = session;
    for (int i = 0; i < MAX_LONG; i++) {
      byte[] body = waitCall(10 + i, runId).getBytes(StandardCharsets.UTF_8);
      attack.add(raw("POST", "/mcp", FakeKeys.GOOD, "application/json", body.length, body));
    }
    Await.until("the MCP waits hold the key's long calls", this::longHeld, n -> n == MAX_LONG);

    HttpResponse<String> excess = mcp(session, waitCall(99, runId));
    assertThat(excess.statusCode()).isEqualTo(200);
    assertThat(excess.body()).contains("\"isError\":true").contains("rate_limited");
    assertThat(excess.body()).contains("http_max_long_calls_per_key " + MAX_LONG);
    assertTheOthersAnswer("/api/v1/runs/" + runId);

    endTheAttack();
    HttpRequest.Builder delete =
        http.request("/mcp")
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + FakeKeys.GOOD)
            .header("Mcp-Session-Id", session)
            .DELETE();
    assertThat(http.send(delete).statusCode()).isEqualTo(200);
    assertAllFree();
    call("POST", "/api/v1/runs/" + runId + "/cancel", FakeKeys.GOOD, null);
  }

  private static String waitCall(int id, String runId) {
    return "{\"jsonrpc\":\"2.0\",\"id\":"
        + id
        + ",\"method\":\"tools/call\",\"params\":{\"name\":\"get_run\",\"arguments\":"
        + "{\"run_id\":\""
        + runId
        + "\",\"wait_seconds\":60}}}";
  }

  private HttpResponse<String> mcp(String session, String body)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        http.request("/mcp")
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + FakeKeys.GOOD)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      b.header("Mcp-Session-Id", session);
    }
    return http.send(b);
  }

  // -- what must hold under each ------------------------------------------------------------

  private int longHeld() {
    return http.face.slots().longCalls(GOOD_BUCKET);
  }

  private static void assertRefusedLongCall(HttpResponse<String> r) throws IOException {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
    JsonNode error = RestFace.tree(r).path("error");
    assertThat(error.path("code").asText()).isEqualTo("rate_limited");
    assertThat(error.path("message").asText())
        .contains("API key key-good")
        .contains("http_max_long_calls_per_key " + MAX_LONG);
  }

  /** /health, another tenant, and the attacking key's own short requests answer. */
  private void assertTheOthersAnswer(String shortPath) throws Exception {
    assertThat(call("GET", "/health", null, null).statusCode()).isEqualTo(200);
    assertThat(call("GET", "/api/v1/sessions", FakeKeys.OTHER_TENANT, null).statusCode())
        .isEqualTo(200);
    assertThat(call("GET", shortPath, FakeKeys.GOOD, null).statusCode()).isEqualTo(200);
  }

  private void assertAllFree() throws InterruptedException {
    Await.until(
        "every slot of the key is free",
        Duration.ofSeconds(30),
        () -> http.face.slots().requests(GOOD_BUCKET) + longHeld(),
        n -> n == 0);
  }

  private static void assertClosedByTheServer(Socket s) throws InterruptedException {
    Await.until(
        "the server closed the slow connection",
        () -> {
          try {
            s.setSoTimeout(100);
            InputStream in = s.getInputStream();
            while (true) {
              if (in.read() < 0) {
                return true;
              }
            }
          } catch (java.net.SocketTimeoutException e) {
            return false;
          } catch (IOException e) {
            return true; // reset
          }
        },
        closed -> closed);
  }

  // -- clients ------------------------------------------------------------------------------

  private HttpResponse<String> call(String method, String path, String key, String body)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        http.request(path)
            .timeout(Duration.ofSeconds(30))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header(
          "Content-Type", method.equals("PUT") ? "application/octet-stream" : "application/json");
    }
    if (key != null) {
      b.header("Authorization", "Bearer " + key);
    }
    return http.send(b);
  }

  /** A request written by hand on a socket of its own: its head and the first bytes of a body. */
  private Socket raw(String method, String path, String key, String type, long length, byte[] first)
      throws IOException {
    Socket s = new Socket("127.0.0.1", http.port());
    OutputStream out = s.getOutputStream();
    StringBuilder head =
        new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + http.port());
    head.append("\r\nAuthorization: Bearer ").append(key);
    if (path.equals("/mcp")) {
      head.append("\r\nAccept: application/json, text/event-stream");
      head.append("\r\nMcp-Session-Id: ").append(mcpSession);
    }
    if (type != null) {
      head.append("\r\nContent-Type: ").append(type);
    }
    if (length > 0) {
      head.append("\r\nContent-Length: ").append(length);
    }
    out.write(head.append("\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
    out.write(first);
    out.flush();
    return s;
  }

  /**
   * From now on, {@link #pace} bytes a second into every attacking socket (until it breaks), in
   * quarters of a second, so that a window of the guard never depends on one tick.
   */
  private void trickle() {
    List<Socket> sockets = List.copyOf(attack);
    trickles.add(
        trickler.scheduleAtFixedRate(
            () -> {
              byte[] tick = new byte[Math.max(1, pace / 4)];
              java.util.Arrays.fill(tick, (byte) ' ');
              for (Socket s : sockets) {
                try {
                  s.getOutputStream().write(tick);
                  s.getOutputStream().flush();
                } catch (IOException e) {
                  // cut off: what the test waits for
                }
              }
            },
            250,
            250,
            TimeUnit.MILLISECONDS));
  }
}

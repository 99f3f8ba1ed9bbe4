package dev.pysandbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.Fast;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.mcp.McpFace;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stopping gracefully, and CORS when origins are allowed: the HTTP face alone (no core: nothing
 * here reaches it), with a mounted servlet that answers when the test says.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Fast
class HttpStopAndCorsTest {
  @TempDir Path dataDir;
  final HttpClient client = HttpClient.newHttpClient();
  volatile CountDownLatch release = new CountDownLatch(1);
  final CountDownLatch entered = new CountDownLatch(1);
  HttpFace face;

  /** Answers once the test releases it. */
  final class HeldServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      entered.countDown();
      if (request.getParameter("async") != null) {
        // as the MCP servlet does: async started, the thread blocked until the answer is there
        request.startAsync().setTimeout(0);
      }
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      response.getWriter().write("done");
      if (request.isAsyncStarted()) {
        request.getAsyncContext().complete();
      }
    }
  }

  HttpFace start(String... settings) {
    return start(HttpFace.IDLE_TIMEOUT, settings);
  }

  HttpFace start(java.time.Duration idleTimeout, String... settings) {
    Map<String, String> values = new HashMap<>(Map.of("http_port", "0", "http_auth", "none"));
    for (int i = 0; i < settings.length; i += 2) {
      values.put(settings[i], settings[i + 1]);
    }
    PysandboxConfig config = TestServices.config(dataDir, values);
    Tenants none =
        tenant -> {
          throw new IllegalStateException("no core here");
        };
    face =
        new HttpFace(config, KeyCheck.EMPTY, null, McpFace.forTenants(none, 1000))
            .mount("/held", new HeldServlet(), 100)
            .idleTimeout(idleTimeout);
    face.start();
    return face;
  }

  @AfterEach
  void stop() {
    release.countDown();
    if (face != null) {
      face.stop(() -> {});
    }
  }

  CompletableFuture<HttpResponse<String>> getAsync(URI uri) {
    return client.sendAsync(
        HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Whether a new TCP connection to the server is refused. */
  static boolean refuses(URI base) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(base.getHost(), base.getPort()));
      return false;
    } catch (ConnectException e) {
      return true;
    }
  }

  @Test
  void stop_letsARequestInFlightFinishWithinTheGrace_andTakesNoNewConnection() throws Exception {
    start("shutdown_grace", "10");
    URI base = face.uri();
    CompletableFuture<HttpResponse<String>> held = getAsync(base.resolve("/held"));
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Boolean> endedTheRest = new CompletableFuture<>();
    CompletableFuture<Void> stopping =
        CompletableFuture.runAsync(
            () -> face.stop(() -> endedTheRest.complete(release.getCount() == 0)));
    // The stop runs on another thread: a connection made before it closed the connector is
    // still taken. Wait until one is refused, then ask as a client would.
    Await.untilChecked("the stopping server refuses new connections", () -> refuses(base), r -> r);
    HttpClient fresh = HttpClient.newHttpClient();
    CompletableFuture<HttpResponse<String>> refused =
        fresh.sendAsync(
            HttpRequest.newBuilder(base.resolve("/health")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(refused)
        .failsWithin(10, TimeUnit.SECONDS)
        .withThrowableOfType(java.util.concurrent.ExecutionException.class)
        .withCauseInstanceOf(ConnectException.class);
    // New connections are refused, so the stop has begun; it waits for the request held.
    assertThat(stopping).as("the stop waits for the request in flight").isNotDone();
    release.countDown();
    assertThat(held.get(10, TimeUnit.SECONDS).body()).isEqualTo("done");
    stopping.get(10, TimeUnit.SECONDS);
    assertThat(endedTheRest.get())
        .as("the rest was ended only once the request in flight was let go")
        .isTrue();
  }

  @Test
  void stop_afterTheGrace_endsTheRest_whoseAnswersStillGoOut() throws Exception {
    start("shutdown_grace", "1");
    CompletableFuture<HttpResponse<String>> held = getAsync(face.uri().resolve("/held"));
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Boolean> heldWhenTheRestEnded = new CompletableFuture<>();
    face.stop(
        () -> {
          heldWhenTheRestEnded.complete(!held.isDone());
          release.countDown();
        });
    assertThat(heldWhenTheRestEnded.getNow(false))
        .as("the rest was ended after the grace, with the request still in flight")
        .isTrue();
    assertThat(held.get(5, TimeUnit.SECONDS).body()).isEqualTo("done");
  }

  /**
   * Regression guard for a short idle timeout: a request the server is still working on (a run with
   * no output yet) is not waiting on its connection, so the idle timeout does not cut it.
   */
  @Test
  void silentLongRequest_outlivesTheIdleTimeout() throws Exception {
    start(java.time.Duration.ofSeconds(1));
    for (String path : new String[] {"/held", "/held?async=1"}) {
      release = new CountDownLatch(1);
      CompletableFuture<HttpResponse<String>> held = getAsync(face.uri().resolve(path));
      // Real time past the connector's 1 s idle timeout (Jetty's clock, not one a test moves):
      // no thread is waited for here, the request is held by the latch.
      Thread.sleep(3000);
      release.countDown();
      HttpResponse<String> r = held.get(10, TimeUnit.SECONDS);
      assertThat(r.statusCode()).as(path).isEqualTo(200);
      assertThat(r.body()).isEqualTo("done");
    }
  }

  @Test
  void allowedOrigin_getsCorsHeadersAndPreflight_otherOriginsStill403() throws Exception {
    start("allowed_origins", "http://app.example:3000");
    URI health = face.uri().resolve("/metrics");
    HttpResponse<String> preflight =
        client.send(
            HttpRequest.newBuilder(face.uri().resolve("/mcp"))
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Origin", "http://app.example:3000")
                .header("Access-Control-Request-Method", "POST")
                .header("Access-Control-Request-Headers", "authorization,content-type")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(preflight.statusCode()).isLessThan(300);
    assertThat(preflight.headers().firstValue("Access-Control-Allow-Origin"))
        .hasValue("http://app.example:3000");
    HttpResponse<String> allowed =
        client.send(
            HttpRequest.newBuilder(health).header("Origin", "http://app.example:3000").build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(allowed.statusCode()).isEqualTo(200);
    assertThat(allowed.headers().firstValue("Access-Control-Allow-Origin"))
        .hasValue("http://app.example:3000");
    assertThat(allowed.headers().firstValue("Access-Control-Expose-Headers").orElse(""))
        .containsIgnoringCase("Mcp-Session-Id");
    HttpResponse<String> other =
        client.send(
            HttpRequest.newBuilder(health).header("Origin", "http://evil.example").build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(other.statusCode()).isEqualTo(403);
    assertThat(other.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
  }
}

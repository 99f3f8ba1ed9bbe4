package dev.pysandbox.http;

import dev.pysandbox.TrickleOrigin;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Measures what the issue 24 attacks (items 4-6) leave of the HTTP face, at the red team's scale
 * and pace, with the default caps and rate floor: while one key attacks, a probe asks {@code
 * /health} and another tenant's {@code GET /api/v1/sessions} ten times a second each, and prints
 * their p50/p99/max and how many answered. Not a test (no wall-clock bound is asserted anywhere);
 * the figures are in docs/DESIGN.md. Run (about two minutes):
 *
 * <pre>
 * mvn -B -o -q dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt -Dmdep.includeScope=test
 * java -cp target/test-classes:target/classes:$(cat /tmp/cp.txt) dev.pysandbox.http.SlowPeersMeasure
 * </pre>
 */
public final class SlowPeersMeasure {
  private SlowPeersMeasure() {}

  public static void main(String[] args) throws Exception {
    Path dir = Files.createTempDirectory("slow-peers");
    try (TrickleOrigin origin = new TrickleOrigin();
        RestFace http =
            RestFace.start(
                dir,
                Map.of(
                    "http_auth",
                    "keys",
                    "pool_size",
                    "0",
                    "index_url",
                    "",
                    "tiers_allowed",
                    "basic,network",
                    "network_allow",
                    "127.0.0.1:" + origin.port(),
                    "network_allow_private",
                    "true"))) {
      for (String s : List.of("lp", "up", "dl")) {
        call(http, "POST", "/api/v1/sessions", "{\"session_id\":\"" + s + "\"}");
      }
      String runId =
          RestFace.JSON
              .readTree(
                  call(
                      http,
                      "POST",
                      "/api/v1/runs",
                      "{\"code\":\"import time\\ntime.sleep(900)\",\"session_id\":\"lp\","
                          + "\"async_mode\":true}"))
              .path("run_id")
              .asText();
      measure(
          http,
          "long polls: GET /runs/{id}?wait_seconds=60, 18/s for 20 s",
          sockets -> {
            for (int i = 0; i < 360; i++) {
              sockets.add(raw(http, "GET", "/api/v1/runs/" + runId + "?wait_seconds=60", 0, null));
              Thread.sleep(1000 / 18);
            }
          });
      measure(
          http,
          "slow uploads: 330 PUTs, a byte every 5 s",
          sockets -> {
            for (int i = 0; i < 330; i++) {
              sockets.add(raw(http, "PUT", "/api/v1/sessions/up/files/f" + i + ".txt", 1000, "x"));
            }
            for (int t = 0; t < 4; t++) {
              Thread.sleep(5000);
              for (Socket s : sockets) {
                try {
                  s.getOutputStream().write('x');
                } catch (IOException e) {
                  // cut off
                }
              }
            }
          });
      String body = "{\"url\":\"" + origin.url("/trickle") + "\",\"filename\":\"t.bin\"}";
      measure(
          http,
          "trickling downloads: 360 download_file, an origin sending a byte a second",
          sockets -> {
            for (int i = 0; i < 360; i++) {
              sockets.add(raw(http, "POST", "/api/v1/sessions/dl/download", -1, body));
              Thread.sleep(1000 / 18);
            }
          });
      call(http, "POST", "/api/v1/runs/" + runId + "/cancel", null);
    }
  }

  interface Attack {
    void run(List<Socket> sockets) throws Exception;
  }

  private static void measure(RestFace http, String what, Attack attack) throws Exception {
    List<Double> health = Collections.synchronizedList(new ArrayList<>());
    List<Double> other = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger failed = new AtomicInteger();
    AtomicBoolean on = new AtomicBoolean(true);
    Thread probe =
        new Thread(
            () -> {
              while (on.get()) {
                probe(http, "/health", null, health, failed);
                probe(http, "/api/v1/sessions", FakeKeys.OTHER_TENANT, other, failed);
                try {
                  Thread.sleep(100);
                } catch (InterruptedException e) {
                  return;
                }
              }
            });
    probe.start();
    List<Socket> sockets = new ArrayList<>();
    try {
      attack.run(sockets);
    } finally {
      on.set(false);
      probe.join();
      for (Socket s : sockets) {
        s.close();
      }
    }
    System.out.println(what);
    System.out.println("  /health          " + summary(health));
    System.out.println("  other tenant     " + summary(other));
    System.out.println("  probes failed    " + failed.get());
  }

  private static void probe(
      RestFace http, String path, String key, List<Double> ms, AtomicInteger failed) {
    HttpRequest.Builder b = http.request(path).timeout(Duration.ofSeconds(10)).GET();
    if (key != null) {
      b.header("Authorization", "Bearer " + key);
    }
    long t0 = System.nanoTime();
    try {
      if (http.send(b).statusCode() == 200) {
        ms.add((System.nanoTime() - t0) / 1e6);
        return;
      }
    } catch (IOException | InterruptedException e) {
      // counted below
    }
    failed.incrementAndGet();
  }

  private static String summary(List<Double> ms) {
    List<Double> sorted = new ArrayList<>(ms);
    Collections.sort(sorted);
    if (sorted.isEmpty()) {
      return "no answer";
    }
    return String.format(
        Locale.ROOT,
        "n=%d p50=%.1f ms p99=%.1f ms max=%.1f ms",
        sorted.size(),
        sorted.get(sorted.size() / 2),
        sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * 0.99) - 1)),
        sorted.get(sorted.size() - 1));
  }

  private static String call(RestFace http, String method, String path, String body)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        http.request(path)
            .header("Authorization", "Bearer " + FakeKeys.GOOD)
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    return http.send(b).body();
  }

  /** A request by hand: its head and (all or the first byte of) its body; never read. */
  private static Socket raw(RestFace http, String method, String path, long length, String body)
      throws IOException {
    Socket s = new Socket("127.0.0.1", http.port());
    byte[] b = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    long declared = length >= 0 ? length : b.length;
    OutputStream out = s.getOutputStream();
    out.write(
        (method
                + " "
                + path
                + " HTTP/1.1\r\nHost: 127.0.0.1:"
                + http.port()
                + "\r\nAuthorization: Bearer "
                + FakeKeys.GOOD
                + "\r\nContent-Type: "
                + (method.equals("PUT") ? "application/octet-stream" : "application/json")
                + (declared > 0 ? "\r\nContent-Length: " + declared : "")
                + "\r\n\r\n")
            .getBytes(StandardCharsets.ISO_8859_1));
    out.write(b);
    out.flush();
    return s;
  }
}

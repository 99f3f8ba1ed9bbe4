package dev.pysandbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.http.rest.RestServlet;
import dev.pysandbox.mcp.McpFace;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A streamed run through the whole HTTP face (its filters, its Jetty) against the real core, and
 * the face stopping while the stream is open: the run is cancelled as any run in flight, and the
 * stream ends with its {@code done}.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Sandboxed
class HttpLiveRunTest {
  @TempDir Path dataDir;

  @Test
  void streamedRun_whenTheServerStops_endsCancelled_withItsDoneOnTheStream() throws Exception {
    Map<String, String> settings =
        Map.of("http_port", "0", "http_auth", "none", "shutdown_grace", "1");
    PysandboxConfig config = TestServices.config(dataDir, settings);
    DefaultSandboxService core = TestServices.start(dataDir, settings);
    RestServlet rest = RestServlet.of(core, config);
    HttpFace face =
        new HttpFace(config, KeyCheck.EMPTY, core, McpFace.forTenants(core, 1000))
            .mountBoundingBodies(RestServlet.MAPPING, rest, rest.maxBodyBytes());
    face.start();
    try {
      HttpClient client = HttpClient.newHttpClient();
      HttpResponse<Stream<String>> r =
          client.send(
              HttpRequest.newBuilder(face.uri().resolve("/api/v1/runs"))
                  .header("Content-Type", "application/json")
                  .header("Accept", "application/x-ndjson")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"code\": \"import time\\nprint('going', flush=True)\\ntime.sleep(60)\"}"))
                  .build(),
              HttpResponse.BodyHandlers.ofLines());
      assertThat(r.statusCode()).isEqualTo(200);
      ObjectMapper json = new ObjectMapper();
      List<JsonNode> events = new ArrayList<>();
      CompletableFuture<Void> stopped = null;
      try (Stream<String> lines = r.body()) {
        Iterator<String> it = lines.iterator();
        while (it.hasNext()) {
          JsonNode e = json.readTree(it.next());
          events.add(e);
          if (e.path("type").asText().equals("stdout") && stopped == null) {
            stopped =
                CompletableFuture.runAsync(
                    () -> face.stop(() -> core.drain(0, "the test stops the server")));
          }
        }
      }
      JsonNode done = events.get(events.size() - 1);
      assertThat(done.path("type").asText()).isEqualTo("done");
      assertThat(done.path("status").asText()).isEqualTo("cancelled");
      assertThat(done.path("message").asText()).contains("the test stops the server");
      stopped.get(20, TimeUnit.SECONDS);
    } finally {
      core.close();
    }
  }
}

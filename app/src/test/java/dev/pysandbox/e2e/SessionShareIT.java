package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Client;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 item 10: with the defaults (max_sessions_per_tenant unset) one tenant opened every
 * session of a keyed server and the next tenant got max_sessions. Now each tenant with a key gets a
 * fair share of max_sessions, over the real HTTP face with real keys.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class SessionShareIT {
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dataDir;
  @TempDir Path elsewhere;

  @Test
  void oneTenantTakesItsShare_andAnotherStillOpensSessions() throws Exception {
    String greedy = key("greedy");
    String other = key("other");
    try (HttpServerProcess server =
        HttpServerProcess.start(
            dataDir, elsewhere, "--set", "max_sessions=4", "--set", "pool_size=0")) {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
      URI base = server.uri();
      for (int i = 0; i < 2; i++) {
        HttpResponse<String> r = create(http, base, greedy, "g" + i);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      }
      HttpResponse<String> third = create(http, base, greedy, "g2");
      assertThat(third.statusCode()).as(third.body()).isEqualTo(429);
      JsonNode error = JSON.readTree(third.body()).path("error");
      assertThat(error.path("code").asText()).isEqualTo("max_sessions");
      assertThat(error.path("message").asText())
          .contains("your fair share is 2")
          .contains("max_sessions 4 among the 2 tenants with keys")
          .contains("max_sessions_per_tenant");
      for (int i = 0; i < 2; i++) {
        HttpResponse<String> r = create(http, base, other, "o" + i);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      }
    }
  }

  private static HttpResponse<String> create(HttpClient http, URI base, String key, String id)
      throws Exception {
    return http.send(
        HttpRequest.newBuilder(base.resolve("/api/v1/sessions"))
            .timeout(Duration.ofSeconds(90))
            .header("Authorization", "Bearer " + key)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"session_id\": \"" + id + "\"}"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private String key(String tenant) throws Exception {
    ServerProcess.Result r = ServerProcess.run(dataDir, null, "keys", "create", "--tenant", tenant);
    assertThat(r.exit()).as(r.stderr()).isZero();
    return r.stdout().strip();
  }
}

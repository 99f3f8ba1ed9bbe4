package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Client;
import dev.pysandbox.api.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator sees every tenant's sessions, runs, calls and security events from the real CLI with
 * {@code --all-tenants}, with a tenant column, without knowing the keys' owners; without it the CLI
 * stays scoped to {@code local} (or {@code --tenant}). The runs are made over REST by two real API
 * keys of a real server.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class CliAllTenantsIT {
  @TempDir Path dataDir;
  @TempDir Path workDir;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  @Test
  void allTenants_listsEveryKeysSessionsRunsCallsAndEvents_withTheirTenant() throws Exception {
    String acme = key("acme");
    String globex = key("globex");
    try (HttpServerProcess server = HttpServerProcess.start(dataDir, workDir)) {
      run(server.uri(), acme, "acme-s", "print('a')", 60);
      run(server.uri(), globex, "globex-s", "print('g')", 60);
      run(server.uri(), acme, null, "while True: pass", 1);
      run(server.uri(), globex, null, "while True: pass", 1);

      ServerProcess.Result local = cli("runs", "list");
      assertThat(local.stdout()).as("local's view is unchanged").contains("(0 of 0 runs)");
      assertThat(local.stdout()).doesNotContain("TENANT");

      ServerProcess.Result runs = cli("runs", "list", "--all-tenants");
      List<String> lines = runs.stdout().lines().toList();
      assertThat(lines.get(0)).startsWith("TENANT").contains("RUN", "STATUS");
      assertThat(lines).filteredOn(l -> l.startsWith("acme ")).hasSize(2);
      assertThat(lines).filteredOn(l -> l.startsWith("globex ")).hasSize(2);
      assertThat(lines).last().isEqualTo("(4 of 4 runs)");
      JsonNode runsJson =
          Json.mapper().readTree(cli("runs", "list", "--all-tenants", "--json").stdout());
      List<String> owners = new ArrayList<>();
      runsJson.path("runs").forEach(r -> owners.add(r.path("tenant").asText()));
      assertThat(owners).containsExactlyInAnyOrder("acme", "acme", "globex", "globex");
      assertThat(
              Json.mapper()
                  .readTree(cli("runs", "list", "--tenant", "acme", "--json").stdout())
                  .path("runs")
                  .get(0)
                  .has("tenant"))
          .as("one tenant's listing does not name it")
          .isFalse();

      ServerProcess.Result sessions = cli("sessions", "list", "--all-tenants");
      assertThat(sessions.stdout().lines())
          .anySatisfy(l -> assertThat(l).startsWith("acme ").contains("acme-s", "idle"))
          .anySatisfy(l -> assertThat(l).startsWith("globex ").contains("globex-s", "idle"));
      assertThat(cli("sessions", "list").stdout()).contains("(0 sessions)");

      ServerProcess.Result events = cli("events", "--all-tenants", "--kind", "limit_stopped_run");
      assertThat(events.stdout().lines())
          .anySatisfy(l -> assertThat(l).startsWith("acme ").contains("limit_stopped_run"))
          .anySatisfy(l -> assertThat(l).startsWith("globex ").contains("limit_stopped_run"));
      JsonNode eventsJson =
          Json.mapper().readTree(cli("events", "--all-tenants", "--json").stdout());
      List<String> eventOwners = new ArrayList<>();
      eventsJson.path("events").forEach(e -> eventOwners.add(e.path("tenant").asText()));
      assertThat(eventOwners).contains("acme", "globex");

      ServerProcess.Result logs = cli("logs", "--all-tenants");
      assertThat(logs.stdout().lines())
          .anySatisfy(l -> assertThat(l).startsWith("acme ").contains("rest run_python"))
          .anySatisfy(l -> assertThat(l).startsWith("globex ").contains("rest run_python"));
      assertThat(cli("logs", "--all-tenants", "--session", "acme-s").stdout().lines())
          .isNotEmpty()
          .allSatisfy(l -> assertThat(l).startsWith("acme "));
      assertThat(cli("logs").stdout()).doesNotContain("run_python");

      ServerProcess.Result both = cli("runs", "list", "--all-tenants", "--tenant", "acme");
      assertThat(both.exit()).isEqualTo(2);
      assertThat(both.stderr()).contains("invalid_argument").contains("--all-tenants");
    }
  }

  private ServerProcess.Result cli(String... args) throws Exception {
    ServerProcess.Result r = ServerProcess.run(dataDir, null, args);
    if (!List.of(args).contains("--tenant") || !List.of(args).contains("--all-tenants")) {
      assertThat(r.exit()).as("%s: %s", List.of(args), r.stderr()).isZero();
    }
    return r;
  }

  private String key(String tenant) throws Exception {
    ServerProcess.Result r = ServerProcess.run(dataDir, null, "keys", "create", "--tenant", tenant);
    assertThat(r.exit()).as(r.stderr()).isZero();
    return r.stdout().strip();
  }

  private void run(URI base, String key, String session, String code, int timeout)
      throws Exception {
    Map<String, Object> body = new java.util.LinkedHashMap<>();
    body.put("code", code);
    body.put("timeout_seconds", timeout);
    if (session != null) {
      body.put("session_id", session);
    }
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(base.resolve("/api/v1/runs"))
                .header("X-API-Key", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.write(body)))
                .timeout(Duration.ofSeconds(90))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
  }
}

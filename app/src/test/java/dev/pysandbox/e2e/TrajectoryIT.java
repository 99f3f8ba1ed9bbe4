package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Json;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trajectories end to end: the real server ({@code bin/pysandbox serve}) driven by the MCP SDK's
 * client over stdio, and with an API key over REST and MCP's Streamable HTTP, each call one line of
 * its session's file; and {@code pysandbox logs}, run from another directory than the checkout,
 * reading them back as text, as JSON, and as they are appended.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class TrajectoryIT {
  @TempDir Path dataDir;
  @TempDir Path elsewhere;

  @Test
  void mcpStdioCalls_areOneLineEach_andLogsPrintsThem_asTextJsonAndAsTheyCome() throws Exception {
    String secret = "STDIO-SECRET-" + System.nanoTime();
    StdioClientTransport transport =
        new StdioClientTransport(
            ServerParameters.builder(TestServices.launcher().toString())
                .args("serve", "--data-dir", dataDir.toString())
                .build(),
            McpJsonDefaults.getMapper());
    transport.setStdErrorHandler(line -> {});
    McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build();
    Path file = dataDir.resolve("trajectories/local/sessions/traj-stdio.jsonl");
    try {
      client.initialize();
      call(client, "create_session", Map.of("session_id", "traj-stdio"));
      String runId =
          call(
                  client,
                  "run_python",
                  Map.of("session_id", "traj-stdio", "code", "s = '" + secret + "'\nlen(s)"))
              .path("run_id")
              .asText();
      call(
          client,
          "upload_file",
          Map.of("session_id", "traj-stdio", "filename", "f.txt", "content", secret));
      call(client, "get_run", Map.of("run_id", runId));

      List<JsonNode> lines = lines(file, 4);
      assertThat(lines)
          .extracting(n -> n.path("tool").asText())
          .containsExactly("create_session", "run_python", "upload_file", "get_run");
      assertThat(lines).allSatisfy(n -> assertThat(n.path("face").asText()).isEqualTo("mcp_stdio"));
      assertThat(lines).allSatisfy(n -> assertThat(n.path("tenant").asText()).isEqualTo("local"));
      assertThat(lines.get(1).path("run_id").asText()).isEqualTo(runId);
      assertThat(lines.get(1).path("run_status").asText()).isEqualTo("succeeded");
      assertThat(lines.get(3).path("run_id").asText()).isEqualTo(runId);
      assertThat(lines.get(3).path("run_status").asText()).isEqualTo("succeeded");
      assertThat(lines.get(2).path("arguments").path("content").path("bytes").asInt())
          .isEqualTo(secret.length());

      Cli text = cli("logs", "--session", "traj-stdio");
      assertThat(text.exit()).as(text.stderr()).isZero();
      List<String> shown = text.stdout().lines().toList();
      assertThat(shown).hasSize(4);
      assertThat(shown.get(0)).matches("\\S+Z mcp_stdio create_session traj-stdio - ok .*");
      assertThat(shown.get(1))
          .contains("mcp_stdio run_python traj-stdio " + runId + " ok succeeded ")
          .contains(" ms args: code=")
          .contains("session_id=10B");
      assertThat(shown.get(2)).contains("content=" + secret.length() + "B");

      Cli json = cli("logs", "--session", "traj-stdio", "--json");
      assertThat(json.exit()).as(json.stderr()).isZero();
      List<String> jsonLines = json.stdout().lines().toList();
      assertThat(jsonLines).hasSize(4);
      for (String l : jsonLines) {
        assertThat(Json.mapper().readTree(l).path("session_id").asText()).isEqualTo("traj-stdio");
      }

      // --follow: the four lines, then one appended after it started; and a session's file that
      // does not exist yet.
      try (Following follow = Following.start(this, "logs", "--session", "traj-stdio", "--follow");
          Following later = Following.start(this, "logs", "--session", "traj-later", "--follow")) {
        for (int i = 0; i < 4; i++) {
          assertThat(follow.next()).as("line " + i).isNotNull();
        }
        call(client, "list_artifacts", Map.of("session_id", "traj-stdio"));
        assertThat(follow.next()).contains("mcp_stdio list_artifacts traj-stdio");
        // Whether the follower is still starting or already looks at a file that is not there,
        // the line must come (TrajectoryReadingTest has the tail of a file not there yet).
        call(client, "create_session", Map.of("session_id", "traj-later"));
        assertThat(later.next()).contains("mcp_stdio create_session traj-later");
      }
    } finally {
      client.closeGracefully();
    }
    assertNoneContains(secret);

    // A line that is not an event is shown as such, escaped; the rest as before.
    Files.writeString(file, "{not json \u001b[2J\n", StandardOpenOption.APPEND);
    Cli broken = cli("logs", "--session", "traj-stdio");
    assertThat(broken.exit()).as(broken.stderr()).isZero();
    assertThat(broken.stdout())
        .contains("(malformed line in sessions/traj-stdio.jsonl: {not json \\x1b[2J)")
        .doesNotContain("\u001b");
    assertThat(broken.stdout().lines()).hasSize(6);
  }

  @Test
  void restCalls_areRecordedForTheKeysTenant_withTheirRequestIds() throws Exception {
    String secret = "REST-SECRET-" + System.nanoTime();
    Cli created = cli("keys", "create", "--tenant", "acme");
    assertThat(created.exit()).as(created.stderr()).isZero();
    String key = created.stdout().strip();
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    List<String> requestIds = new ArrayList<>();
    String runId;
    try (HttpServerProcess server = HttpServerProcess.start(dataDir, elsewhere)) {
      var api = server.uri().resolve("/api/v1/");
      requestIds.add(
          send(
              http,
              key,
              "POST",
              api.resolve("sessions"),
              Json.write(Map.of("session_id", "traj-rest")),
              200));
      requestIds.add(
          send(http, key, "PUT", api.resolve("sessions/traj-rest/files/secret.txt"), secret, 201));
      HttpResponse<String> run =
          http.send(
              request(key, api.resolve("runs"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          Json.write(
                              Map.of(
                                  "session_id",
                                  "traj-rest",
                                  "code",
                                  "print(open('secret.txt').read())"))))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(run.statusCode()).as(run.body()).isEqualTo(201);
      requestIds.add(run.headers().firstValue("X-Request-Id").orElseThrow());
      runId = Json.mapper().readTree(run.body()).path("run_id").asText();
      requestIds.add(send(http, key, "GET", api.resolve("runs/" + runId), null, 200));
      requestIds.add(
          send(http, key, "GET", api.resolve("sessions/traj-rest/files/secret.txt"), null, 200));

      List<JsonNode> lines =
          lines(dataDir.resolve("trajectories/acme/sessions/traj-rest.jsonl"), 5);
      assertThat(lines)
          .extracting(n -> n.path("tool").asText())
          .containsExactly(
              "create_session",
              "upload_file_body",
              "run_python",
              "get_run",
              "download_session_file");
      assertThat(lines).allSatisfy(n -> assertThat(n.path("face").asText()).isEqualTo("rest"));
      assertThat(lines).allSatisfy(n -> assertThat(n.path("tenant").asText()).isEqualTo("acme"));
      assertThat(lines)
          .extracting(n -> n.path("request_id").asText())
          .containsExactlyElementsOf(requestIds);
      assertThat(lines.get(2).path("run_id").asText()).isEqualTo(runId);
      assertThat(lines.get(2).path("run_status").asText()).isEqualTo("succeeded");
      assertThat(lines.get(3).path("run_id").asText()).isEqualTo(runId);

      // The same key over MCP's Streamable HTTP: face mcp_http, the request's id.
      HttpClientStreamableHttpTransport transport =
          HttpClientStreamableHttpTransport.builder(server.uri().toString())
              .endpoint("/mcp")
              .addHttpRequestCustomizer(
                  (builder, method, uri, body, context) ->
                      builder.header("Authorization", "Bearer " + key))
              .build();
      McpSyncClient mcp = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build();
      try {
        mcp.initialize();
        call(mcp, "get_context", Map.of("session_id", "traj-rest"));
      } finally {
        mcp.closeGracefully();
      }
      JsonNode overMcp =
          lines(dataDir.resolve("trajectories/acme/sessions/traj-rest.jsonl"), 6).get(5);
      assertThat(overMcp.path("face").asText()).isEqualTo("mcp_http");
      assertThat(overMcp.path("tool").asText()).isEqualTo("get_context");
      assertThat(overMcp.path("tenant").asText()).isEqualTo("acme");
      assertThat(overMcp.path("request_id").asText()).isNotBlank().isNotIn(requestIds);
    }
    assertNoneContains(secret);

    Cli acme = cli("logs", "--tenant", "acme", "--session", "traj-rest");
    assertThat(acme.exit()).as(acme.stderr()).isZero();
    assertThat(acme.stdout().lines()).hasSize(6);
    assertThat(acme.stdout())
        .contains(" rest run_python traj-rest " + runId + " ok succeeded ")
        .contains("req=" + requestIds.get(0));
    Cli all = cli("logs", "--tenant", "acme");
    assertThat(all.stdout().lines()).hasSize(6);
    // pysandbox run is a call of the tenant local, in the day's file.
    Cli ran = cli("run", "-c", "print(6 * 7)");
    assertThat(ran.exit()).as(ran.stderr()).isZero();
    Cli local = cli("logs");
    assertThat(local.exit()).as(local.stderr()).isZero();
    assertThat(local.stdout()).doesNotContain("traj-rest");
    assertThat(local.stdout().lines())
        .singleElement()
        .asString()
        .matches("\\S+Z cli run_python - run_[0-9a-f]{20} ok succeeded .* ms args: code=12B");
  }

  // -- helpers -----------------------------------------------------------------------------------

  private static JsonNode call(McpSyncClient client, String tool, Map<String, Object> args) {
    CallToolResult r = client.callTool(CallToolRequest.builder(tool).arguments(args).build());
    assertThat(r.isError()).as(tool + ": " + r).isFalse();
    return Json.mapper().valueToTree(r.structuredContent());
  }

  private static HttpRequest.Builder request(String key, java.net.URI uri) {
    return HttpRequest.newBuilder(uri)
        .timeout(Duration.ofSeconds(60))
        .header("Authorization", "Bearer " + key);
  }

  /** Sends one request, checks its status, returns its X-Request-Id. */
  private static String send(
      HttpClient http, String key, String method, java.net.URI uri, String body, int status)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = request(key, uri);
    if (body == null) {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("Content-Type", method.equals("PUT") ? "text/plain" : "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body));
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(method + " " + uri + ": " + r.body()).isEqualTo(status);
    return r.headers().firstValue("X-Request-Id").orElseThrow();
  }

  private static List<JsonNode> lines(Path file, int count) throws InterruptedException {
    return Await.until(
        count + " lines in " + file,
        () -> {
          try {
            List<JsonNode> out = new ArrayList<>();
            for (String l : Files.readAllLines(file)) {
              out.add(Json.mapper().readTree(l));
            }
            return out;
          } catch (IOException e) {
            return List.<JsonNode>of();
          }
        },
        l -> l.size() >= count);
  }

  private void assertNoneContains(String secret) throws IOException {
    try (Stream<Path> all = Files.walk(dataDir.resolve("trajectories"))) {
      for (Path f : all.filter(Files::isRegularFile).toList()) {
        assertThat(Files.readString(f)).as(f.toString()).doesNotContain(secret);
      }
    }
  }

  record Cli(int exit, String stdout, String stderr) {}

  /**
   * {@code bin/pysandbox ARGS --data-dir DIR}, started from a directory that is not the checkout.
   */
  private Cli cli(String... args) throws IOException, InterruptedException {
    Process p = command(args).start();
    p.getOutputStream().close();
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> readAll(p, true));
    String out = readAll(p, false);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("pysandbox " + String.join(" ", args) + " did not finish");
    }
    return new Cli(p.exitValue(), out, err.join());
  }

  private ProcessBuilder command(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(TestServices.launcher().toString());
    cmd.addAll(List.of(args));
    cmd.add("--data-dir");
    cmd.add(dataDir.toString());
    return new ProcessBuilder(cmd).directory(elsewhere.toFile());
  }

  private static String readAll(Process p, boolean stderr) {
    try {
      return new String(
          (stderr ? p.getErrorStream() : p.getInputStream()).readAllBytes(),
          StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  /** A {@code logs --follow} process, its lines as they come, ended when closed. */
  private static final class Following implements AutoCloseable {
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private Following(Process process) {
      this.process = process;
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    lines.add(line);
                  }
                } catch (IOException e) {
                  // ended
                }
              },
              "logs-follow");
      reader.setDaemon(true);
      reader.start();
    }

    static Following start(TrajectoryIT test, String... args) throws IOException {
      return new Following(
          test.command(args).redirectError(ProcessBuilder.Redirect.DISCARD).start());
    }

    /** The next line, waiting at most 20 s; {@code null} when none came. */
    String next() throws InterruptedException {
      return lines.poll(20, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
      process.destroy();
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}

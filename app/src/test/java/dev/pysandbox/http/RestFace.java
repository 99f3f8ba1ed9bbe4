package dev.pysandbox.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.TestServices;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.http.rest.RestServlet;
import dev.pysandbox.mcp.McpFace;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The HTTP face as {@code serve --http} puts it together, in this process: the real core, the REST
 * API mounted the way the server mounts it, Jetty on an ephemeral loopback port, {@code
 * http_auth=none} unless the settings say otherwise, and a plain HTTP/1.1 client.
 */
final class RestFace implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();

  final DefaultSandboxService core;
  final HttpFace face;
  final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  private RestFace(DefaultSandboxService core, HttpFace face) {
    this.core = core;
    this.face = face;
  }

  static RestFace start(Path dataDir, Map<String, String> settings) {
    return start(dataDir, settings, f -> {});
  }

  /** As {@link #start(Path, Map)}, with {@code tune} applied to the face before it starts. */
  static RestFace start(
      Path dataDir, Map<String, String> settings, java.util.function.Consumer<HttpFace> tune) {
    Map<String, String> all = new HashMap<>(Map.of("http_port", "0", "http_auth", "none"));
    all.putAll(settings);
    PysandboxConfig config = TestServices.config(dataDir, all);
    DefaultSandboxService core = TestServices.start(dataDir, all);
    RestServlet rest = RestServlet.of(core, config);
    HttpFace face =
        new HttpFace(config, new FakeKeys(), core, McpFace.forTenants(core, 65536))
            .mountBoundingBodies(RestServlet.MAPPING, rest, rest.maxBodyBytes())
            .withoutKey(RestServlet.DOCUMENT_PATH);
    tune.accept(face);
    try {
      face.start();
    } catch (RuntimeException e) {
      core.close();
      throw e;
    }
    return new RestFace(core, face);
  }

  URI uri(String path) {
    return face.uri().resolve(path);
  }

  int port() {
    return face.port();
  }

  HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(120));
  }

  HttpResponse<String> send(HttpRequest.Builder b) throws IOException, InterruptedException {
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return send(request(path).GET());
  }

  HttpResponse<String> post(String path, Object body) throws IOException, InterruptedException {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))));
  }

  static JsonNode tree(HttpResponse<String> r) throws IOException {
    return JSON.readTree(r.body());
  }

  @Override
  public void close() {
    try {
      face.stop(() -> core.drain(0, "the test is over"));
    } finally {
      core.close();
    }
  }
}

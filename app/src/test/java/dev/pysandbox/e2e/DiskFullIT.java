package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Client;
import dev.pysandbox.LoopFileSystem;
import dev.pysandbox.util.Sha256;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression (issue 23): while the data directory's disk was full, REST uploads were answered 201
 * with a sha256, and read back wrong once space was freed. A workspace is an ext4 image kept sparse
 * on that disk: the upload went into the image's page cache, and the write-back to the full disk
 * was lost. The real server ({@code serve --http}) on a data directory that is a small ext4 of the
 * test's own, filled; uploads over REST (raw and multipart, java.net.http) and MCP {@code
 * upload_file} (the SDK's Streamable HTTP client). Every file acknowledged must read back
 * byte-identical after space is freed, every one refused ({@code disk_full}) must be absent.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Client
class DiskFullIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  @TempDir Path workDir;
  private LoopFileSystem fs;
  private HttpServerProcess server;
  private final HttpClient http = HttpClient.newHttpClient();
  private String api;

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
    if (fs != null) {
      fs.close();
    }
  }

  @Test
  void uploadsOnAFullDisk_areRefusedWithDiskFull_orKeptWhole_neverAcknowledgedAndLost()
      throws Exception {
    fs = LoopFileSystem.ext4(dir, 192L << 20);
    Path dataDir = Files.createDirectory(fs.root().resolve("data"));
    server =
        HttpServerProcess.start(
            dataDir,
            workDir,
            "--set",
            "http_auth=none",
            "--set",
            "rate_limit_per_second=0",
            "--set",
            "disk_quota_mb=64",
            "--set",
            "pool_size=1");
    api = server.uri() + "/api/v1";
    JsonNode run = post("/runs", "{\"code\":\"print(1)\",\"session_id\":\"up\"}");
    assertThat(run.path("status").asText()).as(run.toString()).isEqualTo("succeeded");
    Map<String, byte[]> kept = new LinkedHashMap<>();
    byte[] before = random(100_000, 0);
    assertThat(putRaw("before.bin", before).statusCode()).isEqualTo(201);
    kept.put("before.bin", before);

    Path filler = fs.fill("filler");
    Map<String, byte[]> tried = new LinkedHashMap<>();
    for (int i = 0; i < 3; i++) {
      tried.put("raw" + i + ".bin", random(1 << 20, 10 + i));
      tried.put("form" + i + ".bin", random(500_000, 20 + i));
    }
    int refused = 0;
    try (McpSyncClient mcp = mcp()) {
      for (int i = 0; i < 2; i++) {
        tried.put("mcp" + i + ".bin", random(300_000, 30 + i));
      }
      for (Map.Entry<String, byte[]> e : tried.entrySet()) {
        String name = e.getKey();
        byte[] bytes = e.getValue();
        Answer a =
            name.startsWith("raw")
                ? rest(putRaw(name, bytes))
                : name.startsWith("form")
                    ? rest(postForm(name, bytes))
                    : mcpUpload(mcp, name, bytes);
        if (a.sha256() != null) {
          assertThat(a.sha256()).as("the hash acknowledged for " + name).isEqualTo(hex(bytes));
          kept.put(name, bytes);
        } else {
          assertThat(a.code()).as(name + ": " + a.message()).isEqualTo("disk_full");
          assertThat(a.message()).contains(fs.root().toString()).contains("nothing was kept");
          refused++;
        }
      }
    }

    // Written back while the disk is still full (as the kernel does within half a minute).
    LoopFileSystem.run("sync");
    Files.delete(filler);
    LoopFileSystem.run("sync");
    // What was acknowledged must come from the disk now, not from memory.
    Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
    for (Map.Entry<String, byte[]> e : tried.entrySet()) {
      if (!kept.containsKey(e.getKey())) {
        assertThat(get("/sessions/up/files/" + e.getKey()).statusCode())
            .as(e.getKey() + " was refused: it is not there")
            .isEqualTo(404);
      }
    }
    for (Map.Entry<String, byte[]> e : kept.entrySet()) {
      HttpResponse<byte[]> r = get("/sessions/up/files/" + e.getKey());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(hex(r.body())).as(e.getKey() + " as it reads back").isEqualTo(hex(e.getValue()));
    }
    String listing = new String(get("/sessions/up/files").body(), StandardCharsets.UTF_8);
    assertThat(listing).doesNotContain(".tmp");
    assertThat(refused).as("uploads refused while the disk was full").isPositive();

    byte[] after = random(1 << 20, 99);
    HttpResponse<byte[]> r = putRaw("after.bin", after);
    assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(201);
    assertThat(get("/sessions/up/files/after.bin").body()).isEqualTo(after);
  }

  /** What an upload was answered: a hash when it was kept, else an error. */
  private record Answer(String sha256, String code, String message) {}

  private static Answer rest(HttpResponse<byte[]> r) throws Exception {
    JsonNode body = JSON.readTree(r.body());
    if (r.statusCode() == 201) {
      return new Answer(body.path("sha256").asText(), null, null);
    }
    assertThat(r.statusCode()).as(body.toString()).isEqualTo(507);
    return new Answer(null, body.at("/error/code").asText(), body.at("/error/message").asText());
  }

  private static Answer mcpUpload(McpSyncClient mcp, String name, byte[] bytes) {
    CallToolResult r =
        mcp.callTool(
            CallToolRequest.builder("upload_file")
                .arguments(
                    Map.of(
                        "session_id",
                        "up",
                        "filename",
                        name,
                        "content_base64",
                        Base64.getEncoder().encodeToString(bytes)))
                .build());
    JsonNode s = JSON.valueToTree(r.structuredContent());
    if (!Boolean.TRUE.equals(r.isError())) {
      return new Answer(s.path("sha256").asText(), null, null);
    }
    return new Answer(null, s.at("/error/code").asText(), s.at("/error/message").asText());
  }

  private McpSyncClient mcp() {
    HttpClientStreamableHttpTransport transport =
        HttpClientStreamableHttpTransport.builder(server.uri().toString()).endpoint("/mcp").build();
    McpSyncClient c = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(90)).build();
    c.initialize();
    return c;
  }

  private JsonNode post(String path, String json) throws Exception {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(api + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build();
    return JSON.readTree(http.send(req, HttpResponse.BodyHandlers.ofByteArray()).body());
  }

  private HttpResponse<byte[]> putRaw(String name, byte[] bytes) throws Exception {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(api + "/sessions/up/files/" + name))
            .header("Content-Type", "application/octet-stream")
            .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes))
            .build();
    return http.send(req, HttpResponse.BodyHandlers.ofByteArray());
  }

  private HttpResponse<byte[]> postForm(String name, byte[] bytes) throws Exception {
    String boundary = "pysandbox-" + System.nanoTime();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(
        ("--"
                + boundary
                + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
                + name
                + "\"\r\nContent-Type: application/octet-stream\r\n\r\n")
            .getBytes(StandardCharsets.UTF_8));
    body.writeBytes(bytes);
    body.writeBytes(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(api + "/sessions/up/files"))
            .header("Content-Type", "multipart/form-data; boundary=" + boundary)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray()))
            .build();
    return http.send(req, HttpResponse.BodyHandlers.ofByteArray());
  }

  private HttpResponse<byte[]> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(api + path)).GET().build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  private static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static String hex(byte[] bytes) {
    return Sha256.hex(bytes);
  }
}

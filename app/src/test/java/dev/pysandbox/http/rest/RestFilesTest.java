package dev.pysandbox.http.rest;

import static dev.pysandbox.http.rest.RestTestServer.tree;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import dev.pysandbox.util.Sha256;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files over REST, against the real core: downloads (ETag, 304, one range, 416, attachment),
 * uploads from a raw body and from a multipart form, the upload limit enforced before a byte is
 * read (declared) or at the limit (chunked), memory that does not grow with a file's size, and
 * every way out of the workspace refused: {@code ..}, {@code %2e%2e}, encoded slashes, absolute
 * paths, NUL, and links the sandboxed code made.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class RestFilesTest {
  static final int UPLOAD_MAX = 40 << 20;

  @TempDir static Path dataDir;
  static DefaultSandboxService service;
  static RestTestServer http;

  @BeforeAll
  static void start() throws Exception {
    Map<String, String> settings =
        Map.of("upload_max_bytes", Integer.toString(UPLOAD_MAX), "max_sessions", "20");
    PysandboxConfig config = TestServices.config(dataDir, settings);
    service = TestServices.start(dataDir, settings);
    http = RestTestServer.start(RestServlet.of(service, config));
  }

  @AfterAll
  static void stop() {
    http.close();
    service.close();
  }

  static byte[] pattern(int size) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) (i * 31 + (i >> 8));
    }
    return b;
  }

  static String run(String session, String code) throws Exception {
    HttpResponse<String> r =
        http.json(
            "POST",
            "/runs",
            RestTestServer.JSON.writeValueAsString(Map.of("code", code, "session_id", session)));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    assertThat(tree(r).path("status").asText()).as(r.body()).isEqualTo("succeeded");
    return tree(r).path("run_id").asText();
  }

  static HttpResponse<byte[]> download(String path, String... headers) throws Exception {
    HttpRequest.Builder b = http.request(path).GET();
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return http.client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  @Test
  void download_streamsTheFile_withETagRangesAndAttachment_forSessionsAndRuns() throws Exception {
    String runId =
        run(
            "rf-down",
            "data = bytes((i * 31 + (i >> 8)) & 255 for i in range(1 << 20))\n"
                + "open('data.bin', 'wb').write(data)\n"
                + "open('résumé x.txt', 'w').write('hi')");
    byte[] expected = pattern(1 << 20);
    String etag = "\"" + Sha256.hex(expected) + "\"";

    HttpResponse<byte[]> full = download("/sessions/rf-down/files/data.bin");
    assertThat(full.statusCode()).isEqualTo(200);
    assertThat(full.body()).isEqualTo(expected);
    assertThat(full.headers().firstValue("ETag")).hasValue(etag);
    assertThat(full.headers().firstValue("Content-Length")).hasValue("1048576");
    assertThat(full.headers().firstValue("Accept-Ranges")).hasValue("bytes");
    assertThat(full.headers().firstValue("Last-Modified")).isPresent();
    assertThat(full.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
    assertThat(full.headers().firstValue("Content-Disposition"))
        .hasValue("attachment; filename=\"data.bin\"; filename*=UTF-8''data.bin");

    HttpResponse<byte[]> fromRun = download("/runs/" + runId + "/files/data.bin");
    assertThat(fromRun.statusCode()).isEqualTo(200);
    assertThat(fromRun.body()).isEqualTo(expected);
    assertThat(fromRun.headers().firstValue("ETag")).hasValue(etag);

    HttpResponse<byte[]> same = download("/sessions/rf-down/files/data.bin", "If-None-Match", etag);
    assertThat(same.statusCode()).isEqualTo(304);
    assertThat(same.body()).isEmpty();
    assertThat(
            download("/sessions/rf-down/files/data.bin", "If-None-Match", "\"other\"").statusCode())
        .isEqualTo(200);

    HttpResponse<byte[]> part =
        download("/sessions/rf-down/files/data.bin", "Range", "bytes=10-19");
    assertThat(part.statusCode()).isEqualTo(206);
    assertThat(part.body()).isEqualTo(Arrays.copyOfRange(expected, 10, 20));
    assertThat(part.headers().firstValue("Content-Range")).hasValue("bytes 10-19/1048576");
    HttpResponse<byte[]> tail = download("/runs/" + runId + "/files/data.bin", "Range", "bytes=-5");
    assertThat(tail.statusCode()).isEqualTo(206);
    assertThat(tail.body()).isEqualTo(Arrays.copyOfRange(expected, (1 << 20) - 5, 1 << 20));
    HttpResponse<byte[]> from =
        download("/sessions/rf-down/files/data.bin", "Range", "bytes=1048570-");
    assertThat(from.body()).isEqualTo(Arrays.copyOfRange(expected, 1048570, 1 << 20));
    HttpResponse<byte[]> staleIfRange =
        download("/sessions/rf-down/files/data.bin", "Range", "bytes=0-0", "If-Range", "\"old\"");
    assertThat(staleIfRange.statusCode()).isEqualTo(200);

    HttpResponse<byte[]> outside =
        download("/sessions/rf-down/files/data.bin", "Range", "bytes=1048576-");
    assertThat(outside.statusCode()).isEqualTo(416);
    assertThat(outside.headers().firstValue("Content-Range")).hasValue("bytes */1048576");
    assertThat(RestTestServer.JSON.readTree(outside.body()).path("error").path("code").asText())
        .isEqualTo("invalid_argument");

    HttpResponse<byte[]> named = download("/sessions/rf-down/files/r%C3%A9sum%C3%A9%20x.txt");
    assertThat(named.statusCode()).isEqualTo(200);
    assertThat(new String(named.body(), StandardCharsets.UTF_8)).isEqualTo("hi");
    assertThat(named.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
    assertThat(named.headers().firstValue("Content-Disposition"))
        .hasValue(
            "attachment; filename=\"r_sum_ x.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20x.txt");

    HttpResponse<Void> head =
        http.client.send(
            http.request("/sessions/rf-down/files/data.bin")
                .method("HEAD", HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.discarding());
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.headers().firstValue("ETag")).hasValue(etag);
  }

  @Test
  void download_refusesEveryWayOutOfTheWorkspace_andNeverFollowsALink() throws Exception {
    String runId =
        run(
            "rf-esc",
            "import os\nos.symlink('/etc/passwd', 'l')\nos.symlink('/etc', 'etcdir')\n"
                + "os.makedirs('d')\nopen('d/ok.txt', 'w').write('ok')");
    assertThat(http.rawGet("/sessions/rf-esc/files/d/ok.txt").body()).isEqualTo("ok");
    for (String base : new String[] {"/sessions/rf-esc/files/", "/runs/" + runId + "/files/"}) {
      for (String path :
          new String[] {
            "../../etc/passwd",
            "d/../../etc/passwd",
            "..",
            "%2e%2e/%2e%2e/etc/passwd",
            "%2E%2E",
            "..%2F..%2Fetc%2Fpasswd",
            "%2Fetc%2Fpasswd",
            "/etc/passwd",
            "d/./ok.txt",
            "d//ok.txt",
          }) {
        RestTestServer.RawResponse r = http.rawGet(base + path);
        assertThat(r.status()).as(base + path + ": " + r.body()).isEqualTo(400);
        assertThat(r.json().path("error").path("code").asText()).isEqualTo("invalid_argument");
        assertThat(r.body()).doesNotContain("root:");
      }
      RestTestServer.RawResponse out = http.rawGet(base + "../../../../etc/passwd");
      assertThat(out.status())
          .as("a path that climbs out of /api/v1 is not this servlet's: Jetty's 404")
          .isEqualTo(404);
      assertThat(out.body()).doesNotContain("root:");
      RestTestServer.RawResponse nul = http.rawGet(base + "d%00ok.txt");
      assertThat(nul.status()).as("NUL, refused by Jetty before the servlet").isEqualTo(400);
    }
    for (String link : new String[] {"l", "etcdir/passwd"}) {
      RestTestServer.RawResponse r = http.rawGet("/sessions/rf-esc/files/" + link);
      assertThat(r.status()).as(link + ": " + r.body()).isEqualTo(403);
      assertThat(r.json().path("error").path("code").asText()).isEqualTo("forbidden");
      assertThat(r.body()).doesNotContain("root:");
    }
    assertThat(
            http.rawGet("/sessions/rf-esc/files/l").json().path("error").path("message").asText())
        .contains("symbolic link");
    assertThat(http.rawGet("/sessions/rf-esc/files/nope").status()).isEqualTo(404);
    assertThat(http.rawGet("/sessions/rf-esc/files/d").status()).isEqualTo(400);
  }

  @Test
  void putUpload_writesTheRawBody_201ThenFileExists_thenOverwriteIs200() throws Exception {
    HttpResponse<String> created =
        http.send(
            http.request("/sessions/rf-up/files/hello.txt")
                .PUT(HttpRequest.BodyPublishers.ofString("hello")));
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    JsonNode r = tree(created);
    assertThat(r.path("path").asText()).isEqualTo("hello.txt");
    assertThat(r.path("size_bytes").asLong()).isEqualTo(5);
    assertThat(r.path("sha256").asText()).isEqualTo(Sha256.hex("hello"));
    assertThat(r.path("replaced").asBoolean()).isFalse();
    HttpResponse<String> again =
        http.send(
            http.request("/sessions/rf-up/files/hello.txt")
                .PUT(HttpRequest.BodyPublishers.ofString("again")));
    assertThat(again.statusCode()).isEqualTo(409);
    assertThat(tree(again).path("error").path("code").asText()).isEqualTo("file_exists");
    HttpResponse<String> replaced =
        http.send(
            http.request("/sessions/rf-up/files/hello.txt?overwrite=true")
                .header("Content-Type", "application/x-www-form-urlencoded")
                .PUT(HttpRequest.BodyPublishers.ofString("a=b&c=d")));
    assertThat(replaced.statusCode()).isEqualTo(200);
    assertThat(tree(replaced).path("replaced").asBoolean()).isTrue();
    assertThat(http.rawGet("/sessions/rf-up/files/hello.txt").body())
        .as("a form-encoded body is bytes like any other")
        .isEqualTo("a=b&c=d");
    JsonNode read =
        tree(
            http.json(
                "POST",
                "/runs",
                "{\"code\": \"open('hello.txt').read()\", \"session_id\": \"rf-up\"}"));
    assertThat(read.path("result").path("text/plain").asText()).isEqualTo("'a=b&c=d'");
    HttpResponse<String> dir =
        http.send(
            http.request("/sessions/rf-up/files/sub/x.txt")
                .PUT(HttpRequest.BodyPublishers.ofString("x")));
    assertThat(dir.statusCode()).as("a folder is made as needed").isEqualTo(201);
    assertThat(tree(dir).path("path").asText()).isEqualTo("sub/x.txt");
    HttpResponse<String> up =
        http.send(
            http.request("/sessions/rf-up/files/sub/..%2Fx.txt")
                .PUT(HttpRequest.BodyPublishers.ofString("x")));
    assertThat(up.statusCode()).isEqualTo(400);
    assertThat(tree(up).path("error").path("message").asText()).contains("'..'");
  }

  @Test
  void postUpload_takesTheOneFilePartOfAMultipartForm() throws Exception {
    HttpResponse<String> r = form("rf-form", "file", "form.csv", "a,b\n1,2\n", "");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    assertThat(tree(r).path("path").asText()).isEqualTo("form.csv");
    assertThat(tree(r).path("size_bytes").asLong()).isEqualTo(8);
    assertThat(http.rawGet("/sessions/rf-form/files/form.csv").body()).isEqualTo("a,b\n1,2\n");

    HttpResponse<String> wrongName = form("rf-form", "data", "other.csv", "x", "");
    assertThat(wrongName.statusCode()).isEqualTo(400);
    HttpResponse<String> twoParts =
        form(
            "rf-form",
            "file",
            "two.csv",
            "first",
            "--XyZ\r\nContent-Disposition: form-data; name=\"more\"\r\n\r\nsecond\r\n");
    assertThat(twoParts.statusCode()).as(twoParts.body()).isEqualTo(400);
    assertThat(tree(twoParts).path("error").path("message").asText())
        .contains("more than one part");
    HttpResponse<String> cut =
        http.send(
            http.request("/sessions/rf-form/files")
                .header("Content-Type", "multipart/form-data; boundary=XyZ")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "--XyZ\r\nContent-Disposition: form-data; name=\"file\";"
                            + " filename=\"cut.csv\"\r\n\r\nno closing boundary")));
    assertThat(cut.statusCode()).as(cut.body()).isEqualTo(400);
    JsonNode files = tree(http.get("/sessions/rf-form/files"));
    assertThat(files.path("files").toString())
        .as("nothing of a refused form is kept")
        .contains("form.csv")
        .doesNotContain("other.csv")
        .doesNotContain("two.csv")
        .doesNotContain("cut.csv");
    HttpResponse<String> notAForm =
        http.send(
            http.request("/sessions/rf-form/files")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}")));
    assertThat(notAForm.statusCode()).isEqualTo(415);
  }

  static HttpResponse<String> form(
      String session, String part, String filename, String content, String after) throws Exception {
    String body =
        "preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\""
            + part
            + "\"; filename=\""
            + filename
            + "\"\r\nContent-Type: text/csv\r\n\r\n"
            + content
            + "\r\n"
            + after
            + "--XyZ--\r\n";
    return http.send(
        http.request("/sessions/" + session + "/files")
            .header("Content-Type", "multipart/form-data; boundary=XyZ")
            .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  @Test
  void aDeclaredGigabyte_isRefused413BeforeAByteIsRead() throws Exception {
    http.get("/setup"); // the first request warms Jetty up
    // No byte of the body is ever sent: an answer at all is one that did not wait for it.
    RestTestServer.RawResponse r =
        http.raw(
            "PUT /api/v1/sessions/rf-big/files/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "X-Test-Tenant: local\r\nX-Test-Measure: gigabyte\r\n"
                + "Content-Length: 1073741824\r\n\r\n",
            null);
    assertThat(r.status()).as(r.body()).isEqualTo(413);
    assertThat(r.json().path("error").path("code").asText()).isEqualTo("payload_too_large");
    assertThat(http.allocatedBy("gigabyte")).isLessThan(1L << 20);
    RestTestServer.RawResponse form =
        http.raw(
            "POST /api/v1/sessions/rf-big/files HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "X-Test-Tenant: local\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                + "Content-Length: 1073741824\r\n\r\n",
            null);
    assertThat(form.status()).isEqualTo(413);
  }

  @Test
  void aChunkedUploadOverTheLimit_isCutOffAt413_andLeavesNothing() throws Exception {
    AtomicLong sent = new AtomicLong();
    RestTestServer.RawResponse r;
    try (Socket s = new Socket("127.0.0.1", http.port)) {
      s.setSoTimeout(60_000);
      OutputStream out = s.getOutputStream();
      out.write(
          ("PUT /api/v1/sessions/rf-chunk/files/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  + "X-Test-Tenant: local\r\nTransfer-Encoding: chunked\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      Thread writer =
          new Thread(
              () -> {
                byte[] chunk = new byte[64 * 1024];
                byte[] size = (Integer.toHexString(chunk.length) + "\r\n").getBytes();
                try {
                  while (sent.get() < 4L * UPLOAD_MAX) {
                    out.write(size);
                    out.write(chunk);
                    out.write("\r\n".getBytes());
                    sent.addAndGet(chunk.length);
                  }
                  out.write("0\r\n\r\n".getBytes());
                } catch (java.io.IOException e) {
                  // the server stopped reading: expected
                }
              });
      writer.start();
      InputStream in = s.getInputStream();
      r = RestTestServer.RawResponse.read(in);
      writer.join(30_000);
    }
    assertThat(r.status()).as(r.body()).isEqualTo(413);
    assertThat(r.json().path("error").path("code").asText()).isEqualTo("payload_too_large");
    assertThat(sent.get()).as("it stopped taking bytes").isLessThan(4L * UPLOAD_MAX);
    assertThat(tree(http.get("/sessions/rf-chunk/files")).path("files").size()).isZero();
    JsonNode ls =
        tree(
            http.json(
                "POST",
                "/runs",
                "{\"code\": \"import os\\nos.listdir('.')\", \"session_id\": \"rf-chunk\"}"));
    assertThat(ls.path("result").path("text/plain").asText()).isEqualTo("[]");
  }

  @Test
  void aLargeUploadAndDownload_doNotGrowTheHeap_withTheFilesSize() throws Exception {
    int size = 32 << 20;
    byte[] data = pattern(size);
    HttpResponse<String> up =
        http.send(
            http.request("/sessions/rf-heap/files/large.bin")
                .header("X-Test-Measure", "upload")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(data)));
    assertThat(up.statusCode()).as(up.body()).isEqualTo(201);
    assertThat(tree(up).path("sha256").asText()).isEqualTo(Sha256.hex(data));
    assertThat(http.allocatedBy("upload"))
        .as("bytes allocated serving a 32 MiB upload")
        .isLessThan(8L << 20);

    HttpResponse<String> form =
        http.send(
            http.request("/sessions/rf-heap/files")
                .header("X-Test-Measure", "form")
                .header("Content-Type", "multipart/form-data; boundary=HeapTest")
                .POST(
                    HttpRequest.BodyPublishers.ofByteArrays(
                        List.of(
                            ("--HeapTest\r\nContent-Disposition: form-data; name=\"file\";"
                                    + " filename=\"form.bin\"\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII),
                            data,
                            "\r\n--HeapTest--\r\n".getBytes(StandardCharsets.US_ASCII)))));
    assertThat(form.statusCode()).as(form.body()).isEqualTo(201);
    assertThat(tree(form).path("sha256").asText()).isEqualTo(Sha256.hex(data));
    assertThat(http.allocatedBy("form"))
        .as("bytes allocated serving a 32 MiB multipart upload")
        .isLessThan(8L << 20);

    HttpResponse<InputStream> down =
        http.client.send(
            http.request("/sessions/rf-heap/files/large.bin")
                .header("X-Test-Measure", "download")
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    byte[] got;
    try (InputStream in = down.body()) {
      got = in.readAllBytes();
    }
    assertThat(got).isEqualTo(data);
    assertThat(http.allocatedBy("download"))
        .as("bytes allocated serving a 32 MiB download")
        .isLessThan(8L << 20);
  }
}

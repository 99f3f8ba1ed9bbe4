package dev.pysandbox.http;

import static dev.pysandbox.http.RestFace.tree;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.util.Sha256;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
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
 * Uploads through the whole HTTP face as {@code serve --http} mounts the REST API (its body limit
 * filter in front), with the default {@code upload_max_bytes} of 50 MB: raw, chunked and multipart
 * uploads past the JSON bodies' limit, a 50 MB upload streamed with little heap, 413 for a body
 * over the limit with or without a length, and file paths whose slashes are sent as {@code %2F}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Sandboxed
class HttpUploadsTest {
  static final int UPLOAD_MAX = 50 << 20;

  @TempDir static Path dataDir;
  static RestFace http;

  @BeforeAll
  static void start() {
    http = RestFace.start(dataDir, Map.of("max_sessions", "10"));
  }

  @AfterAll
  static void stop() {
    if (http != null) {
      http.close();
    }
  }

  static byte[] pattern(int size) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) (i * 31 + (i >> 8));
    }
    return b;
  }

  static byte[] form(String filename, byte[] data) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    b.writeBytes(
        ("--Bnd\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
                + filename
                + "\"\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    b.writeBytes(data);
    b.writeBytes("\r\n--Bnd--\r\n".getBytes(StandardCharsets.US_ASCII));
    return b.toByteArray();
  }

  /**
   * Regression: uploads stopped at 1,148,576 bytes (the JSON bodies' limit, which the body limit
   * filter applied to the whole REST API) with 413, and a chunked one with 400.
   */
  @Test
  void uploadsPastTheJsonBodiesLimit_areTaken_raw_chunked_andMultipart() throws Exception {
    byte[] data = pattern(3 << 20);
    String sha = Sha256.hex(data);
    HttpResponse<String> raw =
        http.send(
            http.request("/api/v1/sessions/up-1/files/raw.bin")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(data)));
    assertThat(raw.statusCode()).as(raw.body()).isEqualTo(201);
    assertThat(tree(raw).path("sha256").asText()).isEqualTo(sha);

    HttpResponse<String> chunked =
        http.send(
            http.request("/api/v1/sessions/up-1/files/chunked.bin")
                .PUT(
                    HttpRequest.BodyPublishers.ofInputStream(
                        () -> new ByteArrayInputStream(data))));
    assertThat(chunked.statusCode()).as(chunked.body()).isEqualTo(201);
    assertThat(tree(chunked).path("size_bytes").asLong()).isEqualTo(data.length);
    assertThat(tree(chunked).path("sha256").asText()).isEqualTo(sha);

    HttpResponse<String> multipart =
        http.send(
            http.request("/api/v1/sessions/up-1/files")
                .header("Content-Type", "multipart/form-data; boundary=Bnd")
                .POST(HttpRequest.BodyPublishers.ofByteArray(form("form.bin", data))));
    assertThat(multipart.statusCode()).as(multipart.body()).isEqualTo(201);
    assertThat(tree(multipart).path("sha256").asText()).isEqualTo(sha);
  }

  /** A request written on a socket; the answer read after the body, or when the server stops it. */
  private static Answer sendChunked(String head, long bytes) throws Exception {
    AtomicLong sent = new AtomicLong();
    try (Socket s = new Socket("127.0.0.1", http.port())) {
      s.setSoTimeout(120_000);
      OutputStream out = s.getOutputStream();
      out.write(
          (head + "Host: 127.0.0.1:" + http.port() + "\r\nTransfer-Encoding: chunked\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      Thread writer =
          new Thread(
              () -> {
                byte[] chunk = new byte[64 * 1024];
                byte[] size = (Integer.toHexString(chunk.length) + "\r\n").getBytes();
                try {
                  while (sent.get() < bytes) {
                    out.write(size);
                    out.write(chunk);
                    out.write("\r\n".getBytes());
                    sent.addAndGet(chunk.length);
                  }
                  out.write("0\r\n\r\n".getBytes());
                } catch (IOException e) {
                  // the server stopped reading: expected when it refused the body
                }
              });
      writer.start();
      Answer a = Answer.read(s.getInputStream());
      writer.join(60_000);
      return new Answer(a.status, a.body, sent.get());
    }
  }

  private record Answer(int status, String body, long sent) {
    static Answer read(InputStream in) throws IOException {
      String head = readHead(in);
      int status = Integer.parseInt(head.split(" ")[1]);
      int length = 0;
      for (String line : head.split("\r\n")) {
        if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
          length = Integer.parseInt(line.substring(15).trim());
        }
      }
      return new Answer(status, new String(in.readNBytes(length), StandardCharsets.UTF_8), 0);
    }

    private static String readHead(InputStream in) throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      while (!b.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
        int c = in.read();
        if (c < 0) {
          throw new IOException("the connection closed mid-answer: " + b);
        }
        b.write(c);
      }
      return b.toString(StandardCharsets.ISO_8859_1);
    }

    JsonNode error() throws IOException {
      return RestFace.JSON.readTree(body).path("error");
    }
  }

  /**
   * Regression: a chunked upload over the limit was answered 400 (the filter's cut reached the
   * upload as a broken stream) instead of 413.
   */
  @Test
  void uploadsOverTheLimit_are413_withTheErrorBody_withOrWithoutALength() throws Exception {
    Answer declared;
    try (Socket s = new Socket("127.0.0.1", http.port())) {
      s.setSoTimeout(60_000);
      s.getOutputStream()
          .write(
              ("PUT /api/v1/sessions/up-2/files/big.bin HTTP/1.1\r\nHost: 127.0.0.1:"
                      + http.port()
                      + "\r\n"
                      + "Content-Length: "
                      + (UPLOAD_MAX + 1)
                      + "\r\n\r\n")
                  .getBytes(StandardCharsets.ISO_8859_1));
      declared = Answer.read(s.getInputStream()); // answered before a byte of the body is sent
    }
    assertThat(declared.status()).as(declared.body()).isEqualTo(413);
    assertThat(declared.error().path("code").asText()).isEqualTo("payload_too_large");
    assertThat(declared.error().path("message").asText()).contains(Long.toString(UPLOAD_MAX));

    Answer chunked =
        sendChunked(
            "PUT /api/v1/sessions/up-2/files/big.bin HTTP/1.1\r\n", 2L * UPLOAD_MAX + (1 << 20));
    assertThat(chunked.status()).as(chunked.body()).isEqualTo(413);
    assertThat(chunked.error().path("code").asText()).isEqualTo("payload_too_large");
    assertThat(chunked.error().path("message").asText()).contains("upload_max_bytes");
    assertThat(chunked.sent()).as("it stopped taking bytes").isLessThan(2L * UPLOAD_MAX);

    Answer form =
        sendChunked(
            "POST /api/v1/sessions/up-2/files HTTP/1.1\r\n"
                + "Content-Type: multipart/form-data; boundary=Bnd\r\n",
            2L * UPLOAD_MAX + (1 << 20));
    assertThat(form.status()).as(form.body()).isEqualTo(413);
    assertThat(form.error().path("code").asText()).isEqualTo("payload_too_large");

    HttpResponse<String> json =
        http.send(
            http.request("/api/v1/runs")
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofInputStream(
                        () ->
                            new ByteArrayInputStream(
                                ("{\"code\": \"" + "x".repeat(3 << 20) + "\"}")
                                    .getBytes(StandardCharsets.UTF_8)))));
    assertThat(json.statusCode()).as("a chunked JSON body keeps its own limit").isEqualTo(413);
    assertThat(tree(http.get("/api/v1/sessions/up-2/files")).path("files").size()).isZero();
  }

  /**
   * A 50 MB upload, written from one buffer on a raw socket so that the client allocates nothing of
   * it: what every thread of this JVM allocated meanwhile stays far below the file's size.
   */
  @Test
  void aFiftyMegabyteUpload_isStreamed_withoutHoldingTheFile() throws Exception {
    byte[] chunk = pattern(64 * 1024);
    MessageDigest sha = Sha256.newDigest();
    long before = allocatedByAllThreads();
    long began = System.nanoTime();
    Answer a;
    try (Socket s = new Socket("127.0.0.1", http.port())) {
      s.setSoTimeout(120_000);
      OutputStream out = s.getOutputStream();
      out.write(
          ("PUT /api/v1/sessions/up-3/files/fifty.bin HTTP/1.1\r\nHost: 127.0.0.1:"
                  + http.port()
                  + "\r\n"
                  + "Content-Length: "
                  + UPLOAD_MAX
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      for (int sent = 0; sent < UPLOAD_MAX; sent += chunk.length) {
        out.write(chunk);
        sha.update(chunk);
      }
      a = Answer.read(s.getInputStream());
    }
    long millis = (System.nanoTime() - began) / 1_000_000;
    long allocated = allocatedByAllThreads() - before;
    assertThat(a.status()).as(a.body()).isEqualTo(201);
    JsonNode r = RestFace.JSON.readTree(a.body());
    assertThat(r.path("size_bytes").asLong()).isEqualTo(UPLOAD_MAX);
    assertThat(r.path("sha256").asText())
        .isEqualTo(java.util.HexFormat.of().formatHex(sha.digest()));
    System.out.printf(
        "50 MiB raw upload through the HTTP face: %d ms, %.1f MiB allocated by the JVM's"
            + " threads meanwhile%n",
        millis, allocated / 1048576.0);
    assertThat(allocated)
        .as("bytes allocated in this JVM while a 50 MiB upload was served")
        .isLessThan(16L << 20);
  }

  private static long allocatedByAllThreads() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long total = 0;
    for (long b : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
      total += Math.max(0, b);
    }
    return total;
  }

  /**
   * Regression: an upload could not name a folder ("no directories"), and a path whose slashes were
   * sent as {@code %2F} was refused by the server's URI rules. Folders are made as needed, owned by
   * the sandbox's user; a link the code planted is never followed.
   */
  @Test
  void uploadsIntoFolders_withSlashesRawOrAsPercent2F_makeTheFolders_butFollowNoLink()
      throws Exception {
    for (String path : List.of("in/raw.csv", "in%2Fencoded.csv", "deep%2Fer/and%2Fdeeper.csv")) {
      HttpResponse<String> r =
          http.send(
              http.request("/api/v1/sessions/up-5/files/" + path)
                  .PUT(HttpRequest.BodyPublishers.ofString("a,b\n")));
      assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(201);
      assertThat(tree(r).path("path").asText())
          .isEqualTo(java.net.URLDecoder.decode(path, StandardCharsets.UTF_8));
    }
    HttpResponse<String> form =
        http.send(
            http.request("/api/v1/sessions/up-5/files")
                .header("Content-Type", "multipart/form-data; boundary=Bnd")
                .POST(HttpRequest.BodyPublishers.ofByteArray(form("in/form.csv", pattern(10)))));
    assertThat(form.statusCode()).as(form.body()).isEqualTo(201);
    HttpResponse<String> seen =
        http.post(
            "/api/v1/runs",
            Map.of(
                "session_id",
                "up-5",
                "code",
                "import os\n"
                    + "open('in/mine.txt', 'w').write('the code writes in the folder made')\n"
                    + "os.symlink('/tmp', 'out')\n"
                    + "sorted(os.listdir('in')), sorted(os.listdir('deep/er/and'))"));
    assertThat(seen.statusCode()).as(seen.body()).isEqualTo(201);
    assertThat(tree(seen).path("result").path("text/plain").asText())
        .isEqualTo("(['encoded.csv', 'form.csv', 'mine.txt', 'raw.csv'], ['deeper.csv'])");
    for (String path : List.of("out/x.txt", "out%2Fx.txt", "in/raw.csv/x.txt")) {
      HttpResponse<String> r =
          http.send(
              http.request("/api/v1/sessions/up-5/files/" + path)
                  .PUT(HttpRequest.BodyPublishers.ofString("x")));
      assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(400);
      assertThat(tree(r).path("error").path("message").asText()).contains("not a folder");
    }
    assertThat(Path.of("/tmp/x.txt")).doesNotExist();
  }

  /**
   * Regression: a file under a folder, its slash sent as {@code %2F} (as an OpenAPI client encodes
   * a path parameter), was refused by the server's URI rules ("Ambiguous URI path separator").
   */
  @Test
  void filesUnderFolders_areRead_withTheirSlashesSentRawOrAsPercent2F_butNeverOutside()
      throws Exception {
    HttpResponse<String> made =
        http.post(
            "/api/v1/runs",
            Map.of(
                "session_id",
                "up-4",
                "code",
                "import os\nos.makedirs('a/b', exist_ok=True)\nopen('a/b/c.csv', 'w').write('x,y\\n')"));
    assertThat(made.statusCode()).as(made.body()).isEqualTo(201);
    for (String path : List.of("a/b/c.csv", "a%2Fb%2Fc.csv", "a/b%2Fc.csv", "a%2fb/c.csv")) {
      HttpResponse<String> r = http.get("/api/v1/sessions/up-4/files/" + path);
      assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("x,y\n");
    }
    for (String path : List.of("a%2F..%2F..%2Fetc%2Fpasswd", "..%2Fup-3%2Ffifty.bin")) {
      HttpResponse<String> r = http.get("/api/v1/sessions/up-4/files/" + path);
      assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(400);
      assertThat(tree(r).path("error").path("message").asText()).contains("..");
    }
  }
}

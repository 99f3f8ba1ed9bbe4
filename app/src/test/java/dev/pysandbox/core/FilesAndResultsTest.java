package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.util.Sha256;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** upload_file, list/read_artifact and rich results, against real sandboxes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Sandboxed
class FilesAndResultsTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;

  @BeforeAll
  static void start() {
    service =
        TestServices.start(
            dataDir,
            Map.of("upload_max_bytes", "1000", "max_sessions", "50", "read_max_bytes", "8192"));
  }

  @AfterAll
  static void stop() {
    service.close();
  }

  static ErrorCode codeOf(Throwable t) {
    return ((PysandboxException) t).code();
  }

  static UploadRequest text(String session, String name, String content) {
    return new UploadRequest(session, name, content, null, false);
  }

  @Test
  void filenames_followTheRules() {
    for (String ok :
        List.of("data.csv", "chart-v2.png", "A".repeat(255), "a_b.c-d", "path/file.txt")) {
      assertThat(service.uploadFile(text("names", ok, "x")).path()).isEqualTo(ok);
    }
    for (String bad :
        List.of(
            "",
            "A".repeat(256),
            "has space.txt",
            "/etc/file.txt",
            "path//file.txt",
            "path/../file.txt",
            "file@name.txt",
            "..hidden",
            "foo..bar",
            ".",
            "..")) {
      assertThatThrownBy(() -> service.uploadFile(text("names", bad, "x")))
          .as(bad)
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }
  }

  @Test
  void upload_thenCodeReadsIt_andOverwriteIsExplicit() {
    service.uploadFile(text("up", "data.csv", "a,b\n1,2\n"));
    RunRecord r =
        service.run(
            new ExecutionRequest(
                "import pandas as pd\npd.read_csv('data.csv')['b'].sum()", "up", null, null));
    assertThat(r.result()).containsEntry("text/plain", "2");
    assertThat(r.artifacts()).as("an upload is not something the run created").isEmpty();
    assertThatThrownBy(() -> service.uploadFile(text("up", "data.csv", "new")))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.FILE_EXISTS));
    var replaced = service.uploadFile(new UploadRequest("up", "data.csv", "new", null, true));
    assertThat(replaced.replaced()).isTrue();
    byte[] png = {(byte) 0x89, 'P', 'N', 'G', 0, 1, 2, (byte) 0xff};
    service.uploadFile(
        new UploadRequest("up", "img.png", null, Base64.getEncoder().encodeToString(png), false));
    var read = service.readArtifact(null, "up", "img.png", 100);
    assertThat(read.content()).isNull();
    assertThat(Base64.getDecoder().decode(read.contentBase64())).isEqualTo(png);
    assertThat(read.mediaType()).isEqualTo("image/png");
    assertThat(
            service.run(new ExecutionRequest("open('data.csv').read()", "up", null, null)).result())
        .containsEntry("text/plain", "'new'");
  }

  @Test
  void badUploads_createNoSession() {
    assertThatThrownBy(
            () ->
                service.uploadFile(
                    new UploadRequest("nob64", "x.bin", null, "not base64!!", false)))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> service.uploadFile(text("toolarge", "x.txt", "y".repeat(1001))))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("1001 bytes");
    String hugeB64 = "A".repeat(4000);
    assertThatThrownBy(
            () -> service.uploadFile(new UploadRequest("toolarge2", "x.bin", null, hugeB64, false)))
        .hasMessageContaining("before decoding");
    assertThatThrownBy(
            () -> service.uploadFile(new UploadRequest("both", "x.bin", "a", "YQ==", false)))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThat(service.listSessions())
        .noneMatch(s -> List.of("nob64", "toolarge", "toolarge2", "both").contains(s.sessionId()));
  }

  @Test
  void readArtifact_refusesEscapes_links_directories_andLargeFiles() {
    service.run(
        new ExecutionRequest(
            "import os\nos.symlink('/etc/passwd', 'passwd')\nos.makedirs('dir/sub')\n"
                + "open('dir/sub/ok.txt', 'w').write('fine')\nos.symlink('/etc', 'etcdir')\n"
                + "open('big.txt', 'w').write('z' * 5000)",
            "esc",
            null,
            null));
    assertThat(service.readArtifact(null, "esc", "dir/sub/ok.txt", 100).content())
        .isEqualTo("fine");
    assertThatThrownBy(() -> service.readArtifact(null, "esc", "../etc/passwd", 100))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> service.readArtifact(null, "esc", "/etc/passwd", 100))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> service.readArtifact(null, "esc", "passwd", 100000))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.FORBIDDEN));
    assertThatThrownBy(() -> service.readArtifact(null, "esc", "etcdir/passwd", 100000))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.FORBIDDEN));
    assertThatThrownBy(() -> service.readArtifact(null, "esc", "dir", 100))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> service.readArtifact(null, "esc", "big.txt", 4999))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.ARTIFACT_TOO_LARGE));
    assertThatThrownBy(() -> service.readArtifact(null, "esc", "nope.txt", 100))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND));
    assertThat(service.listArtifacts(null, "esc").files())
        .extracting(f -> f.path())
        .containsExactly("big.txt", "dir/sub/ok.txt");
  }

  @Test
  void openArtifact_streamsAFileOverReadMaxBytes_throughItsDescriptor_andRefusesWhatReadRefuses()
      throws Exception {
    service.run(
        new ExecutionRequest(
            "import os\nos.symlink('/etc/passwd', 'passwd')\nos.makedirs('d')\n"
                + "open('d/big.bin', 'wb').write(bytes(range(256)) * 40)",
            "stream",
            null,
            null));
    byte[] expected = new byte[256 * 40];
    for (int i = 0; i < expected.length; i++) {
      expected[i] = (byte) i;
    }
    try (FileStream f = service.openArtifact(null, "stream", "d/big.bin")) {
      assertThat(f.sizeBytes()).as("over read_max_bytes 8192").isEqualTo(10240);
      assertThat(f.sha256()).isEqualTo(Sha256.hex(expected));
      assertThat(f.path()).isEqualTo("d/big.bin");
      assertThat(f.modifiedAt()).isAfter(java.time.Instant.now().minusSeconds(600));
      f.content().skipNBytes(10000);
      assertThat(f.content().readAllBytes())
          .isEqualTo(java.util.Arrays.copyOfRange(expected, 10000, 10240));
    }
    for (var bad :
        Map.of(
                "passwd", ErrorCode.FORBIDDEN,
                "../etc/passwd", ErrorCode.INVALID_ARGUMENT,
                "/etc/passwd", ErrorCode.INVALID_ARGUMENT,
                "d", ErrorCode.INVALID_ARGUMENT,
                "nope", ErrorCode.NOT_FOUND)
            .entrySet()) {
      assertThatThrownBy(() -> service.openArtifact(null, "stream", bad.getKey()))
          .as(bad.getKey())
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(bad.getValue()));
    }
  }

  @Test
  void uploadStream_writesThroughABoundedBuffer_andLeavesNothingWhenCutOff() throws Exception {
    var r =
        service.uploadStream(
            "streamup",
            "s.txt",
            new java.io.ByteArrayInputStream("streamed".getBytes(StandardCharsets.UTF_8)),
            1000,
            false);
    assertThat(r.sizeBytes()).isEqualTo(8);
    assertThat(r.sha256()).isEqualTo(Sha256.hex("streamed"));
    assertThat(service.readArtifact(null, "streamup", "s.txt", 100).content())
        .isEqualTo("streamed");
    assertThatThrownBy(
            () ->
                service.uploadStream(
                    "streamup",
                    "big.bin",
                    new java.io.ByteArrayInputStream(new byte[1001]),
                    5000,
                    false))
        .as("upload_max_bytes 1000 caps maxBytes")
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.PAYLOAD_TOO_LARGE));
    assertThatThrownBy(
            () ->
                service.uploadStream(
                    "streamup",
                    "big.bin",
                    new java.io.ByteArrayInputStream(new byte[11]),
                    10,
                    false))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.PAYLOAD_TOO_LARGE));
    java.io.InputStream failing =
        new java.io.InputStream() {
          int left = 100;

          @Override
          public int read() throws java.io.IOException {
            if (left == 0) {
              throw new java.io.EOFException("the client went away");
            }
            left--;
            return 'x';
          }
        };
    assertThatThrownBy(() -> service.uploadStream("streamup", "cut.txt", failing, 1000, false))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("the client went away");
    assertThatThrownBy(
            () ->
                service.uploadStream(
                    "streamup", "s.txt", new java.io.ByteArrayInputStream(new byte[1]), 10, false))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.FILE_EXISTS));
    assertThatThrownBy(
            () ->
                service.uploadStream(
                    "streamup",
                    "d/../x.txt",
                    new java.io.ByteArrayInputStream(new byte[1]),
                    10,
                    false))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    RunRecord ls =
        service.run(
            new ExecutionRequest("import os\nsorted(os.listdir('.'))", "streamup", null, null));
    assertThat(ls.result()).containsEntry("text/plain", "['s.txt']");
  }

  @Test
  void uploadOverALinkTheCodeMade_replacesTheLink_neverWritesThroughIt() throws Exception {
    service.run(
        new ExecutionRequest(
            "import os\nos.symlink('/tmp/target', 'trap.txt')", "trap", null, null));
    service.uploadFile(new UploadRequest("trap", "trap.txt", "safe", null, true));
    RunRecord r =
        service.run(
            new ExecutionRequest(
                "import os\nprint(os.path.islink('trap.txt'), os.path.exists('/tmp/target'), open('trap.txt').read())",
                "trap",
                null,
                null));
    assertThat(r.stdout()).isEqualTo("False False safe\n");
  }

  @Test
  void richResults_displaysFiguresAndOutputs() {
    RunRecord r =
        service.run(
            ExecutionRequest.of(
                "import pandas as pd, matplotlib.pyplot as plt, datetime\n"
                    + "class Pic:\n    def _repr_png_(self):\n        return b'\\x89PNG fake'\n"
                    + "display(pd.DataFrame({'a': [1, 2]}))\n"
                    + "display(Pic())\n"
                    + "plt.plot([1, 2, 3])\n"
                    + "__outputs__['n'] = 3\n"
                    + "__outputs__['when'] = datetime.date(2026, 1, 2)\n"
                    + "pd.DataFrame({'b': [3]})"));
    assertThat(r.displays()).hasSize(3);
    assertThat(r.displays().get(0)).containsKeys("text/plain", "text/html");
    assertThat(r.displays().get(1)).containsKey("image/png");
    assertThat(r.displays().get(2).get("image/png").toString()).startsWith("iVBORw0KGgo");
    assertThat(r.result()).containsKeys("text/plain", "text/html");
    assertThat(r.outputs()).containsEntry("n", 3);
    assertThat(r.outputs().get("when").toString()).contains("datetime.date(2026, 1, 2)");
    assertThat(r.outputsNonJson()).containsExactly("when");
    assertThat(service.getRunOutputs(r.runId()).outputs()).containsEntry("n", 3);
  }

  @Test
  void pltShow_emitsTheFigureAtOnce() {
    RunRecord r =
        service.run(
            ExecutionRequest.of(
                "import matplotlib.pyplot as plt\nplt.plot([1])\nplt.show()\nprint('after')"));
    assertThat(r.displays()).hasSize(1);
    assertThat(r.displays().get(0)).containsKey("image/png");
  }

  @Test
  void context_getAndSet() {
    service.run(
        new ExecutionRequest(
            "import math\nx = 5\nnames = ['a']\nf = lambda: 1", "ctx", null, null));
    var all = service.getContext("ctx", null);
    assertThat(all.variables()).containsKeys("x", "names", "f").doesNotContainKey("math");
    assertThat(all.variables().get("x")).isEqualTo(Map.of("type", "int", "value", 5));
    assertThat(((Map<?, ?>) all.variables().get("f")).get("repr").toString()).contains("lambda");
    var some = service.getContext("ctx", List.of("x", "missing"));
    assertThat(some.variables()).containsOnlyKeys("x");
    assertThat(some.missing()).containsExactly("missing");
    service.setContext("ctx", Map.of("threshold", 0.5, "labels", List.of("a", "b")));
    assertThat(
            service.run(new ExecutionRequest("threshold * 2, labels", "ctx", null, null)).result())
        .containsEntry("text/plain", "(1.0, ['a', 'b'])");
    assertThatThrownBy(() -> service.setContext("ctx", Map.of("bad name", 1)))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> service.getContext("nosuch", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND));
  }
}

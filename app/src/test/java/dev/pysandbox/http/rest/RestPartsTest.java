package dev.pysandbox.http.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.op.Operations;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The REST face's small parts, without a server: ranges, decoding, query kinds, forms. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@Fast
class RestPartsTest {
  @Test
  void range_oneByteRangeIsClamped_othersAreWholeOrUnsatisfiable() {
    assertThat(Downloads.parse("bytes=0-9", 100)).isEqualTo(new Downloads.Range(0, 9));
    assertThat(Downloads.parse("bytes=90-200", 100)).isEqualTo(new Downloads.Range(90, 99));
    assertThat(Downloads.parse("bytes=90-", 100)).isEqualTo(new Downloads.Range(90, 99));
    assertThat(Downloads.parse("bytes=-10", 100)).isEqualTo(new Downloads.Range(90, 99));
    assertThat(Downloads.parse("bytes=-1000", 100)).isEqualTo(new Downloads.Range(0, 99));
    assertThat(Downloads.parse("BYTES = 5-5 ", 100)).isNull(); // not "bytes=": the whole file
    assertThat(Downloads.parse("bytes=100-", 100)).isSameAs(Downloads.NOT_SATISFIABLE);
    assertThat(Downloads.parse("bytes=-0", 100)).isSameAs(Downloads.NOT_SATISFIABLE);
    assertThat(Downloads.parse("bytes=0-", 0)).isSameAs(Downloads.NOT_SATISFIABLE);
    for (String whole :
        List.of("bytes=0-1,5-6", "bytes=9-3", "bytes=a-b", "items=0-1", "bytes=-")) {
      assertThat(Downloads.parse(whole, 100)).as(whole).isNull();
    }
  }

  @Test
  void ifNoneMatch_comparesWeaklyAndTakesAStar() {
    assertThat(Downloads.matches("\"a\", W/\"b\"", "\"b\"")).isTrue();
    assertThat(Downloads.matches("*", "\"b\"")).isTrue();
    assertThat(Downloads.matches("\"a\"", "\"b\"")).isFalse();
    assertThat(Downloads.matches(null, "\"b\"")).isFalse();
  }

  @Test
  void contentDisposition_namesTheFileInRfc5987_andPlainAscii() {
    assertThat(Downloads.contentDisposition("out/chart 1.png"))
        .isEqualTo("attachment; filename=\"chart 1.png\"; filename*=UTF-8''chart%201.png");
    assertThat(Downloads.contentDisposition("a\"b\\c;ü.txt"))
        .isEqualTo("attachment; filename=\"a_b_c;_.txt\"; filename*=UTF-8''a%22b%5Cc%3B%C3%BC.txt");
  }

  @Test
  void percentDecoding_isStrictAndOnce() {
    assertThat(PercentDecoding.decode("%2e%2e%2Fx", false)).isEqualTo("../x");
    assertThat(PercentDecoding.decode("%252e", false)).isEqualTo("%2e");
    assertThat(PercentDecoding.decode("a+b", false)).isEqualTo("a+b");
    assertThat(PercentDecoding.decode("a+b%20c", true)).isEqualTo("a b c");
    assertThat(PercentDecoding.decode("caf%C3%A9", false)).isEqualTo("café");
    assertThat(PercentDecoding.decode("😀%20é+", true)).isEqualTo("😀 é ");
    for (String bad : List.of("%", "%2", "%zz", "%C3", "%FF")) {
      assertThatThrownBy(() -> PercentDecoding.decode(bad, false))
          .as(bad)
          .isInstanceOf(PysandboxException.class);
    }
  }

  @Test
  void pathTemplate_takesTheRestForPath_andNoEmptyVariable() {
    PathTemplate t = PathTemplate.of("/runs/{run_id}/files/{path}");
    assertThat(t.variables()).containsExactly("run_id", "path");
    assertThat(t.matches(List.of("runs", "r1", "files", "a", "b%2Fc"))).isTrue();
    assertThat(t.values(List.of("runs", "r1", "files", "a", "b%2Fc")))
        .isEqualTo(Map.of("run_id", "r1", "path", "a/b/c"));
    assertThat(t.values(List.of("runs", "r1", "files", "", "etc"))).containsEntry("path", "/etc");
    assertThat(t.matches(List.of("runs", "", "files", "a"))).isFalse();
    assertThat(t.matches(List.of("runs", "r1", "files"))).isFalse();
    assertThat(t.matches(List.of("runs", "r1", "files", ""))).isFalse();
    assertThat(PathTemplate.of("/runs/{run_id}").matches(List.of("runs", ""))).isFalse();
  }

  @Test
  void queryArguments_areConvertedByKind() {
    Map<String, List<String>> q =
        QueryArguments.parse("limit=5&offset=0&status=running&session_id=a+b&x");
    assertThat(q).containsEntry("session_id", List.of("a b")).containsEntry("x", List.of(""));
    Map<String, Object> args = QueryArguments.convert(Operations.LIST_RUNS, q);
    assertThat(args).containsEntry("limit", 5L).containsEntry("offset", 0L);
    assertThat(
            QueryArguments.convert(
                Operations.GET_CONTEXT, QueryArguments.parse("names=a,b&names=c&names=")))
        .containsEntry("names", List.of("a", "b", "c"));
    assertThat(
            QueryArguments.convert(Operations.GET_RUN, QueryArguments.parse("include_code=false")))
        .containsEntry("include_code", false);
    assertThat(
            QueryArguments.convert(
                Operations.CREATE_SESSION, QueryArguments.parse("cpu_limit=1.5")))
        .containsEntry("cpu_limit", 1.5);
    for (String bad : List.of("limit=1.5", "limit=", "limit=0x10", "limit=%201")) {
      assertThatThrownBy(
              () -> QueryArguments.convert(Operations.LIST_RUNS, QueryArguments.parse(bad)))
          .as(bad)
          .hasMessageContaining("'limit' must be a whole number");
    }
    assertThatThrownBy(
            () ->
                QueryArguments.convert(Operations.GET_RUN, QueryArguments.parse("include_code=1")))
        .hasMessageContaining("true or false");
    assertThatThrownBy(
            () ->
                QueryArguments.convert(
                    Operations.CREATE_SESSION, QueryArguments.parse("cpu_limit=NaN")))
        .hasMessageContaining("must be a number");
  }

  /** A body that arrives a few bytes at a time, so that boundaries fall across reads. */
  static InputStream dripping(String body, int step) {
    ByteArrayInputStream in = new ByteArrayInputStream(body.getBytes(StandardCharsets.ISO_8859_1));
    return new InputStream() {
      @Override
      public int read() {
        return in.read();
      }

      @Override
      public int read(byte[] b, int off, int len) {
        return in.read(b, off, Math.min(len, step));
      }
    };
  }

  @Test
  void multipartFile_streamsTheFilePart_whereverTheReadsSplitIt() throws Exception {
    // Near misses of the delimiter (CRLF--XyZ), split wherever the reads fall.
    String content = "line\r\n--Xy not\r\n-\r\r\n--XyQ\r\n--X\rend--XyZ";
    String body =
        "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\n\r\n"
            + content
            + "\r\n--XyZ--\r\n";
    for (int step : new int[] {1, 2, 3, 7, 64, 1 << 20}) {
      MultipartFile f =
          MultipartFile.open(dripping(body, step), "multipart/form-data; boundary=XyZ", 1 << 20);
      assertThat(f.filename()).isEqualTo("f.txt");
      assertThat(new String(f.readAllBytes(), StandardCharsets.ISO_8859_1))
          .as("read " + step + " bytes at a time")
          .isEqualTo(content);
    }
  }

  @Test
  void multipartFile_refusesOtherPartsAndAnUnfinishedForm() throws Exception {
    String second =
        "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nA\r\n"
            + "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nB\r\n--b--\r\n";
    for (int step : new int[] {1, 1000}) {
      assertThatThrownBy(
              () ->
                  MultipartFile.open(
                          dripping(second, step), "multipart/form-data; boundary=b", 1 << 20)
                      .readAllBytes())
          .hasMessageContaining("more than one part");
    }
    String unfinished =
        "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nAAAA";
    MultipartFile g =
        MultipartFile.open(dripping(unfinished, 1000), "multipart/form-data; boundary=b", 1 << 20);
    assertThatThrownBy(g::readAllBytes).isInstanceOf(PysandboxException.class);
    String noFilename =
        "--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nA\r\n--b--\r\n";
    assertThatThrownBy(
            () ->
                MultipartFile.open(
                    dripping(noFilename, 1000), "multipart/form-data; boundary=b", 1 << 20))
        .hasMessageContaining("no filename");
    assertThatThrownBy(() -> MultipartFile.open(dripping("", 1), "text/plain", 1 << 20))
        .hasMessageContaining("multipart/form-data");
    InputStream endlessPreamble =
        new InputStream() {
          @Override
          public int read() {
            return 'x';
          }
        };
    assertThatThrownBy(
            () -> MultipartFile.open(endlessPreamble, "multipart/form-data; boundary=b", 100_000))
        .satisfies(
            e ->
                assertThat(((PysandboxException) e).code())
                    .isEqualTo(dev.pysandbox.api.ErrorCode.PAYLOAD_TOO_LARGE));
  }
}

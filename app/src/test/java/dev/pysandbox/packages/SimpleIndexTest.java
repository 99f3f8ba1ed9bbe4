package dev.pysandbox.packages;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.util.Sha256;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A PEP 503 index over a directory of wheels, which real pip installs from offline. */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Sandboxed
class SimpleIndexTest {
  @TempDir Path dir;
  private Path wheels;
  private SimpleIndex index;
  private final HttpClient http =
      HttpClient.newBuilder()
          .proxy(HttpClient.Builder.NO_PROXY)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  @BeforeEach
  void start() throws Exception {
    wheels = dir.resolve("wheels");
    TinyWheels.build(wheels, "tinypkg", "1.0");
    TinyWheels.build(wheels, "tinypkg", "2.0");
    index = SimpleIndex.serve(wheels);
  }

  @AfterEach
  void stop() {
    index.close();
  }

  private HttpResponse<String> get(String path) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(index.url().resolve(path)).timeout(Duration.ofSeconds(10)).build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<byte[]> getBytes(String path) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(index.url().resolve(path)).timeout(Duration.ofSeconds(10)).build();
    return http.send(request, HttpResponse.BodyHandlers.ofByteArray());
  }

  private List<String> pip(String... requirements) {
    List<String> args = new ArrayList<>();
    args.addAll(
        List.of("--index-url", index.url().toString(), "--retries", "0", "--timeout", "10"));
    args.addAll(List.of(requirements));
    return args;
  }

  @Test
  void url_isLoopbackSimple() {
    URI url = index.url();
    assertThat(url.getScheme()).isEqualTo("http");
    assertThat(url.getHost()).isEqualTo("127.0.0.1");
    assertThat(url.getPort()).isPositive();
    assertThat(url.getPath()).isEqualTo("/simple/");
  }

  @Test
  void pages_listProjectsAndFilesWithHashes() throws Exception {
    TinyWheels.build(wheels, "Other_Pkg", "0.1");
    HttpResponse<String> root = get("/simple/");
    assertThat(root.statusCode()).isEqualTo(200);
    assertThat(root.headers().firstValue("content-type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
    assertThat(root.body())
        .contains("<a href=\"/simple/tinypkg/\">tinypkg</a>")
        .contains("<a href=\"/simple/other-pkg/\">other-pkg</a>");

    HttpResponse<String> project = get("/simple/tinypkg/");
    assertThat(project.statusCode()).isEqualTo(200);
    for (String version : List.of("1.0", "2.0")) {
      String file = "tinypkg-" + version + "-py3-none-any.whl";
      String sha256 = Sha256.hex(Files.readAllBytes(wheels.resolve(file)));
      assertThat(project.body()).contains("href=\"/files/" + file + "#sha256=" + sha256 + "\"");
      HttpResponse<byte[]> wheel = getBytes("/files/" + file);
      assertThat(wheel.statusCode()).isEqualTo(200);
      assertThat(wheel.body()).isEqualTo(Files.readAllBytes(wheels.resolve(file)));
    }
    assertThat(get("/simple/other-pkg/").body()).contains("other_pkg-0.1-py3-none-any.whl");
  }

  @Test
  void unnormalizedProjectNames_redirectToTheNormalizedPage() throws Exception {
    TinyWheels.build(wheels, "Other_Pkg", "0.1");
    for (String path : List.of("/simple/Other_Pkg/", "/simple/other-pkg", "/simple/OTHER.pkg")) {
      HttpResponse<String> r = get(path);
      assertThat(r.statusCode()).as(path).isEqualTo(301);
      assertThat(r.headers().firstValue("location").orElseThrow())
          .as(path)
          .endsWith("/simple/other-pkg/");
    }
  }

  @Test
  void unknownPathsAndFiles_are404() throws Exception {
    Files.writeString(wheels.resolve("notes.txt"), "not served");
    for (String path :
        List.of(
            "/simple/nothing/",
            "/files/nothing-1.0-py3-none-any.whl",
            "/files/notes.txt",
            "/files/%2e%2e/wheels/tinypkg-1.0-py3-none-any.whl",
            "/elsewhere")) {
      assertThat(get(path).statusCode()).as(path).isIn(400, 404);
    }
  }

  @Test
  void requests_areCountedPerPath() throws Exception {
    get("/simple/");
    get("/simple/tinypkg/");
    get("/simple/tinypkg/");
    getBytes("/files/tinypkg-1.0-py3-none-any.whl");
    assertThat(index.requests("/simple/")).isEqualTo(3);
    assertThat(index.requests("/simple/tinypkg/")).isEqualTo(2);
    assertThat(index.requests("/files/tinypkg-1.0")).isEqualTo(1);
    assertThat(index.requests("/files/tinypkg-2.0")).isZero();
    assertThat(index.requests("/")).isEqualTo(4);
  }

  @Test
  void pip_installsEachVersionFromTheIndexOnce() throws Exception {
    for (String version : List.of("1.0", "2.0")) {
      Path target = dir.resolve("target-" + version);
      HostPython.Result install = HostPython.pipInstall(target, pip("tinypkg==" + version));
      assertThat(install.exit()).as(install.describe()).isZero();
      HostPython.Result hello = HostPython.hello(target, "tinypkg");
      assertThat(hello.exit()).as(hello.describe()).isZero();
      assertThat(hello.stdout().strip()).isEqualTo(TinyWheels.greeting("tinypkg", version));
      assertThat(index.requests("/files/tinypkg-" + version + "-")).isEqualTo(1);
    }
    assertThat(index.requests("/simple/tinypkg/")).isEqualTo(2);
  }

  @Test
  void pip_resolvesADependencyChain() throws Exception {
    TinyWheels.build(
        wheels,
        "chain-a",
        "1.0",
        "import chain_b\n\n\ndef hello():\n    return 'a then ' + chain_b.hello()\n",
        List.of("chain-b>=1.0"));
    TinyWheels.build(wheels, "chain-b", "0.9");
    TinyWheels.build(wheels, "chain-b", "1.1");
    Path target = dir.resolve("target");
    HostPython.Result install = HostPython.pipInstall(target, pip("chain-a"));
    assertThat(install.exit()).as(install.describe()).isZero();
    HostPython.Result hello = HostPython.hello(target, "chain_a");
    assertThat(hello.stdout().strip())
        .as(hello.describe())
        .isEqualTo("a then " + TinyWheels.greeting("chain-b", "1.1"));
    assertThat(index.requests("/simple/chain-b/")).isEqualTo(1);
    assertThat(index.requests("/files/chain_b-1.1-")).isEqualTo(1);
    assertThat(index.requests("/files/chain_b-0.9-")).isZero();
  }

  @Test
  void unavailable_answers503AndPipFails() throws Exception {
    index.unavailable(true);
    Path target = dir.resolve("target");
    HostPython.Result install = HostPython.pipInstall(target, pip("tinypkg==1.0"));
    assertThat(install.exit()).as(install.describe()).isNotZero();
    // pip logs the 503 itself only at debug level; it comes, finds nothing and says so.
    assertThat(install.stderr()).contains("No matching distribution found for tinypkg==1.0");
    assertThat(index.requests("/simple/tinypkg/")).isPositive();
    assertThat(index.requests("/files/")).isZero();
    assertThat(get("/simple/").statusCode()).isEqualTo(503);
    assertThat(get("/files/tinypkg-1.0-py3-none-any.whl").statusCode()).isEqualTo(503);

    index.unavailable(false);
    assertThat(get("/simple/tinypkg/").statusCode()).isEqualTo(200);
  }
}

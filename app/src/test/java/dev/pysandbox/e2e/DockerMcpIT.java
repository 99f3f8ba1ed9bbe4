package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Await;
import dev.pysandbox.Docker;
import dev.pysandbox.TestEngine;
import dev.pysandbox.TestServices;
import dev.pysandbox.backend.ProcessTable;
import dev.pysandbox.config.DataLayout;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The docker backend as a client meets it: {@code pysandbox serve} with {@code backend=docker},
 * started by the MCP SDK's client over stdio from a directory of the client's, on a real engine
 * (Podman's Docker API). A second server on another data directory comes and goes beside it, and a
 * server killed with SIGKILL leaves containers that the next server of its data directory removes.
 * A run of more than a minute is in {@link LongRunIT}, beside the bubblewrap one.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Docker
class DockerMcpIT {
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dataDir;
  @TempDir static Path otherDataDir;
  @TempDir static Path workDir;
  @TempDir static Path wheels;
  static McpSyncClient client;
  static final List<String> serverStderr = new CopyOnWriteArrayList<>();

  @BeforeAll
  @Timeout(value = 900, unit = TimeUnit.SECONDS) // a clean machine builds the image first
  static void start() throws Exception {
    dev.pysandbox.packages.TinyWheels.build(wheels, "tinypkg", "1.0");
    // The wheelhouse is bound into the build's container, whose user must read it.
    Files.setPosixFilePermissions(
        wheels, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    client = connect(dataDir, serverStderr);
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.closeGracefully();
    }
  }

  static McpSyncClient connect(Path data, List<String> stderr) {
    return connect(data, workDir, wheels, stderr);
  }

  /**
   * A docker server on {@code data}, started from {@code work}, that builds packages from the
   * wheels in {@code findLinks} (no index).
   */
  static McpSyncClient connect(Path data, Path work, Path findLinks, List<String> stderr) {
    TestEngine engine = TestEngine.get();
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args(
                "serve",
                "--data-dir",
                data.toString(),
                "--set",
                "backend=docker",
                "--set",
                "docker_host=" + engine.dockerHost(),
                "--set",
                "docker_image=" + engine.image(),
                "--set",
                "pool_size=1",
                "--set",
                "index_url=",
                "--set",
                "find_links=" + findLinks)
            .build();
    StdioClientTransport transport =
        new StdioClientTransport(params, McpJsonDefaults.getMapper()) {
          @Override
          protected ProcessBuilder getProcessBuilder() {
            return super.getProcessBuilder().directory(work.toFile());
          }
        };
    transport.setStdErrorHandler(stderr::add);
    McpSyncClient c =
        McpClient.sync(transport)
            .requestTimeout(Duration.ofSeconds(90))
            .initializationTimeout(Duration.ofSeconds(90))
            .build();
    c.initialize();
    return c;
  }

  static JsonNode call(McpSyncClient on, String tool, Map<String, Object> args) {
    CallToolResult r = on.callTool(CallToolRequest.builder(tool).arguments(args).build());
    JsonNode json = JSON.valueToTree(r.structuredContent());
    String shown = args.toString();
    assertThat(r.isError())
        .as("%s %s: %s", tool, shown.length() > 300 ? shown.substring(0, 300) + "…" : shown, json)
        .isFalse();
    return json;
  }

  static JsonNode call(String tool, Map<String, Object> args) {
    return call(client, tool, args);
  }

  @Test
  void checkSetup_saysDocker_withTheEngineAndTheImagesPython() {
    JsonNode report = call("check_setup", Map.of());
    assertThat(report.path("ready").asBoolean()).as(report.toString()).isTrue();
    assertThat(report.path("backends").get(0).path("name").asText()).isEqualTo("docker");
    assertThat(report.toString())
        .contains("Podman")
        .contains(TestEngine.get().image())
        .contains("numpy");
  }

  @Test
  void oneShot_runsNumpy_givesTheLastValue_andAFigure() {
    JsonNode run =
        call(
            "run_python",
            Map.of(
                "code",
                "import numpy as np, matplotlib.pyplot as plt\n"
                    + "plt.plot(np.arange(5))\nplt.show()\n"
                    + "print('sum', np.arange(10).sum())\nnp.arange(4).tolist()"));
    assertThat(run.path("status").asText()).as(run.toString()).isEqualTo("succeeded");
    assertThat(run.path("stdout").asText()).isEqualTo("sum 45\n");
    assertThat(run.path("result").toString()).contains("[0, 1, 2, 3]");
    assertThat(run.toString()).contains("image/png");
  }

  @Test
  void session_keepsVariablesAndFiles_andATimeoutKillsOnlyItsRun() {
    String id = call("create_session", Map.of()).path("session_id").asText();
    call(
        "run_python", Map.of("session_id", id, "code", "x = 41\nopen('f.txt', 'w').write('kept')"));
    JsonNode r =
        call("run_python", Map.of("session_id", id, "code", "print(x + 1, open('f.txt').read())"));
    assertThat(r.path("stdout").asText()).isEqualTo("42 kept\n");
    JsonNode slow = call("run_python", Map.of("code", "while True: pass", "timeout_seconds", 2));
    assertThat(slow.path("status").asText()).isEqualTo("timed_out");
    JsonNode again = call("run_python", Map.of("session_id", id, "code", "x"));
    assertThat(again.path("result").toString()).contains("41");
    call("close_session", Map.of("session_id", id));
  }

  @Test
  void packages_areBuiltInAContainerOfTheImage_andUsedReadOnly() {
    JsonNode run =
        call(
            "run_python",
            Map.of(
                "code",
                "import tinypkg, sys\nprint(tinypkg.hello())\n"
                    + "try:\n    open(tinypkg.__file__, 'a')\n"
                    + "except OSError as e:\n    print('read-only', e.errno)",
                "packages",
                List.of("tinypkg==1.0")));
    assertThat(run.path("status").asText()).as(run.toString()).isEqualTo("succeeded");
    // EACCES or EROFS: the files are the server's and not writable, on a read-only bind.
    assertThat(run.path("stdout").asText())
        .matches(
            dev.pysandbox.packages.TinyWheels.greeting("tinypkg", "1.0") + "\nread-only (13|30)\n");
    assertThat(run.path("pip_freeze").toString()).contains("tinypkg==1.0");
  }

  @Test
  void aFileOfSeveralMegabytes_goesIntoTheContainer_andOneComesBack() {
    String id = call("create_session", Map.of()).path("session_id").asText();
    byte[] big = new byte[8 << 20];
    new java.util.Random(17).nextBytes(big);
    call(
        "upload_file",
        Map.of(
            "session_id",
            id,
            "filename",
            "big.bin",
            "content_base64",
            java.util.Base64.getEncoder().encodeToString(big)));
    JsonNode r =
        call(
            "run_python",
            Map.of(
                "session_id",
                id,
                "code",
                "import hashlib\nb = open('big.bin', 'rb').read()\n"
                    + "open('out.txt', 'w').write('x' * (3 << 20))\n"
                    + "print(len(b), hashlib.sha256(b).hexdigest())"));
    assertThat(r.path("stdout").asText())
        .isEqualTo((8 << 20) + " " + dev.pysandbox.util.Sha256.hex(big) + "\n");
    JsonNode out = call("read_artifact", Map.of("session_id", id, "path", "out.txt"));
    assertThat(out.path("content").asText()).hasSize(3 << 20);
    call("close_session", Map.of("session_id", id));
  }

  @Test
  void aSecondServer_onAnotherDataDir_comesAndGoes_withoutTouchingThisOnesContainers()
      throws Exception {
    String id = call("create_session", Map.of()).path("session_id").asText();
    call("run_python", Map.of("session_id", id, "code", "y = 'mine'"));
    List<String> otherErr = new CopyOnWriteArrayList<>();
    McpSyncClient other = connect(otherDataDir, otherErr);
    try {
      JsonNode r = call(other, "run_python", Map.of("code", "print('other')"));
      assertThat(r.path("stdout").asText()).isEqualTo("other\n");
    } finally {
      other.closeGracefully();
    }
    JsonNode mine = call("run_python", Map.of("session_id", id, "code", "y"));
    assertThat(mine.path("result").toString()).contains("mine");
    call("close_session", Map.of("session_id", id));
    assertThat(serverStderr).noneMatch(l -> l.contains("Exception"));
    try (Stream<Path> left = Files.list(workDir)) {
      assertThat(left.toList()).as("the server's working directory stays empty").isEmpty();
    }
  }

  @Test
  void aServerKilledWithSigkill_takesItsProcessesAlong_andTheNextServerRemovesItsContainers(
      @TempDir Path killedDataDir) throws Exception {
    TestEngine engine = TestEngine.get();
    String marker = "pysandbox-marker-" + java.util.UUID.randomUUID();
    Process server =
        new ProcessBuilder(
                TestServices.launcher().toString(),
                "serve",
                "--data-dir",
                killedDataDir.toString(),
                "--set",
                "backend=docker",
                "--set",
                "docker_host=" + engine.dockerHost(),
                "--set",
                "docker_image=" + engine.image(),
                "--set",
                "pool_size=0")
            .directory(workDir.toFile())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    String code =
        "import subprocess, time\\nsubprocess.Popen(['sh', '-c', 'sleep 600; echo "
            + marker
            + "'], start_new_session=True)\\ntime.sleep(600)";
    String requests =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n"
            + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
            + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\",\"arguments\":{\"code\":\""
            + code
            + "\"}}}\n";
    server.getOutputStream().write(requests.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    server.getOutputStream().flush();
    try {
      Await.until(
          "the run's detached child on the host",
          Duration.ofSeconds(60),
          () -> ProcessTable.withCommandLineContaining(marker),
          pids -> !pids.isEmpty());
      String identity = new DataLayout(killedDataDir).identity();
      assertThat(containers(identity)).as("the killed server's container").hasSize(1);
      server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      Await.until(
          "no process of the killed server's container left",
          Duration.ofSeconds(60),
          () -> ProcessTable.withCommandLineContaining(marker),
          List::isEmpty);
      List<String> err = new CopyOnWriteArrayList<>();
      McpSyncClient next = connect(killedDataDir, err);
      try {
        JsonNode r = call(next, "run_python", Map.of("code", "print('next')"));
        assertThat(r.path("stdout").asText()).isEqualTo("next\n");
        // Start-up hygiene runs beside the first calls: give it a moment.
        Await.until(
            "only running containers of the data directory (the dead one's removed)",
            Duration.ofSeconds(60),
            () -> containers(identity),
            states -> states.stream().allMatch(state -> state.equals("running")));
      } finally {
        next.closeGracefully();
      }
    } finally {
      server.destroyForcibly();
    }
  }

  /** The states of the containers labelled with a data directory's identity. */
  static List<String> containers(String identity) {
    TestEngine engine = TestEngine.get();
    var config =
        com.github.dockerjava.core.DefaultDockerClientConfig.createDefaultConfigBuilder()
            .withDockerHost(engine.dockerHost())
            .build();
    var http =
        new com.github.dockerjava.httpclient5.ApacheDockerHttpClient.Builder()
            .dockerHost(config.getDockerHost())
            .responseTimeout(Duration.ofSeconds(30))
            .build();
    try (var docker = com.github.dockerjava.core.DockerClientImpl.getInstance(config, http)) {
      return docker
          .listContainersCmd()
          .withShowAll(true)
          .withLabelFilter(Map.of("dev.pysandbox.data-dir", identity))
          .exec()
          .stream()
          .map(c -> c.getState())
          .toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}

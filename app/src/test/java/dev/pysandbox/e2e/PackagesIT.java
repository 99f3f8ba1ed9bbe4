package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import dev.pysandbox.packages.SimpleIndex;
import dev.pysandbox.packages.TinyWheels;
import dev.pysandbox.util.Sha256;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Packages and the way out, as an MCP client meets them: the real server ({@code bin/pysandbox
 * serve}, started in a directory of its own, not the checkout) over stdio with the SDK's client,
 * real pip installing wheels from a PEP 503 index the test serves on loopback, and an origin server
 * the network tier and {@code download_file} may reach ({@code network_allow}) through the server's
 * egress proxy. The last test reads everything the server wrote to stderr. One file over the usual
 * size because it is one server's story, started once for all its tests.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Client
class PackagesIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String ORIGIN_BODY = "hello";
  static final String REFUSED = "Refused by pysandbox's network policy";

  @TempDir static Path dataDir;
  @TempDir static Path wheels;
  @TempDir static Path workDir;
  static SimpleIndex index;
  static HttpServer origin;
  static final AtomicInteger originRequests = new AtomicInteger();
  static McpSyncClient client;
  static final List<io.modelcontextprotocol.spec.McpSchema.ProgressNotification> progress =
      new CopyOnWriteArrayList<>();
  static final List<String> serverStderr = new CopyOnWriteArrayList<>();

  @BeforeAll
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  static void start() throws Exception {
    TinyWheels.build(wheels, "tinypkg", "1.0");
    TinyWheels.build(wheels, "tinypkg", "2.0");
    index = SimpleIndex.serve(wheels);
    origin = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    origin.createContext(
        "/",
        exchange -> {
          originRequests.incrementAndGet();
          String path = exchange.getRequestURI().getPath();
          byte[] body =
              (path.equals("/missing") ? "no such file" : ORIGIN_BODY)
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().set("Content-Type", "text/plain");
          if (path.equals("/cut-short")) {
            // Promises 1000 bytes, sends 10; the handler's exception makes the server drop the
            // connection.
            exchange.sendResponseHeaders(200, 1000);
            exchange.getResponseBody().write(new byte[10]);
            exchange.getResponseBody().flush();
            throw new IOException("cut short on purpose");
          }
          exchange.sendResponseHeaders(path.equals("/missing") ? 404 : 200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    origin.start();

    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args(
                "serve",
                "--data-dir",
                dataDir.toString(),
                "--set",
                "index_url=" + index.url(),
                "--set",
                "network_allow_private=true",
                "--set",
                "tiers_allowed=basic,network",
                "--set",
                "network_allow=127.0.0.1:" + originPort(),
                "--set",
                "pool_size=1")
            .build();
    StdioClientTransport transport =
        new StdioClientTransport(params, McpJsonDefaults.getMapper()) {
          @Override
          protected ProcessBuilder getProcessBuilder() {
            // As a client starts it: in a directory of the client's, not the checkout.
            return super.getProcessBuilder().directory(workDir.toFile());
          }
        };
    transport.setStdErrorHandler(serverStderr::add);
    client =
        McpClient.sync(transport)
            .requestTimeout(Duration.ofSeconds(150))
            .progressConsumer(progress::add)
            .build();
    client.initialize();
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.closeGracefully();
    }
    if (origin != null) {
      origin.stop(0);
    }
    if (index != null) {
      index.close();
    }
  }

  static int originPort() {
    return origin.getAddress().getPort();
  }

  static String originUrl(String path) {
    return "http://127.0.0.1:" + originPort() + path;
  }

  static CallToolResult callTool(String tool, Map<String, Object> args) {
    return client.callTool(CallToolRequest.builder(tool).arguments(args).build());
  }

  /** A call that must succeed; its structured content. */
  static JsonNode call(String tool, Map<String, Object> args) {
    CallToolResult r = callTool(tool, args);
    JsonNode json = JSON.valueToTree(r.structuredContent());
    assertThat(r.isError()).as("%s %s: %s", tool, args, json).isFalse();
    return json;
  }

  /** A call that must be a tool error; its {@code error} object. */
  static JsonNode error(String tool, Map<String, Object> args) {
    CallToolResult r = callTool(tool, args);
    JsonNode json = JSON.valueToTree(r.structuredContent());
    assertThat(r.isError()).as("%s %s: %s", tool, args, json).isTrue();
    return json.path("error");
  }

  /** A run that must have succeeded; its record. */
  static JsonNode ran(Map<String, Object> args) {
    JsonNode run = call("run_python", args);
    assertThat(run.path("status").asText()).as(run.toString()).isEqualTo("succeeded");
    return run;
  }

  static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  static String greeting(String version) {
    return TinyWheels.greeting("tinypkg", version);
  }

  static final String HELLO = "import tinypkg\nprint(tinypkg.hello())";

  // -- packages ----------------------------------------------------------------------------------

  @Test
  void aSlowEnvironmentBuild_sendsProgress_withPipsLines_beforeTheRunStarts() throws Exception {
    TinyWheels.build(wheels, "progresspkg", "1.0");
    index.stall(1500); // every index request waits: the build takes a few seconds
    try {
      String token = "build-" + System.nanoTime();
      CallToolResult r =
          client.callTool(
              CallToolRequest.builder("run_python")
                  .arguments(
                      Map.of(
                          "code",
                          "import progresspkg; print(progresspkg.hello())",
                          "packages",
                          List.of("progresspkg==1.0")))
                  .progressToken(token)
                  .build());
      assertThat(r.isError()).as(String.valueOf(r.structuredContent())).isFalse();
      List<String> messages =
          progress.stream()
              .filter(p -> token.equals(p.progressToken()))
              .map(p -> String.valueOf(p.message()))
              .toList();
      assertThat(messages).as("progress while pip works").isNotEmpty();
      assertThat(messages)
          .anyMatch(
              m -> m.contains("progresspkg") || m.contains("environment") || m.contains("Collect"));
    } finally {
      index.stall(0);
    }
  }

  @Test
  void oneShotRun_withAPackage_printsItsGreeting_recordsItsEnvironment_andCannotWriteIntoIt() {
    String code =
        HELLO
            + "\nimport os, tinypkg\n"
            + "for target in ('/opt/pysandbox/env/x', os.path.dirname(tinypkg.__file__) + '/x'):\n"
            + "    try:\n"
            + "        open(target, 'w').write('x')\n"
            + "        print('wrote', target)\n"
            + "    except OSError as e:\n"
            + "        print('errno', e.errno)\n";
    JsonNode run = ran(Map.of("code", code, "packages", List.of("tinypkg==1.0")));
    assertThat(run.path("stdout").asText())
        .as("the environment is read-only (EROFS), the package itself too")
        .isEqualTo(greeting("1.0") + "\nerrno 30\nerrno 30\n");

    JsonNode stored = call("get_run", Map.of("run_id", run.path("run_id").asText()));
    assertThat(strings(stored.path("packages"))).containsExactly("tinypkg==1.0");
    assertThat(stored.path("environment").asText()).matches("[0-9a-f]{32}");
    assertThat(stored.path("pip_freeze").asText()).contains("tinypkg==1.0");
    assertThat(stored.path("env_hash").asText()).matches("[0-9a-f]{64}");
  }

  @Test
  void twoSessions_withTwoVersionsOfOnePackage_sideBySide_eachSeeTheirOwn() {
    JsonNode one =
        call("create_session", Map.of("session_id", "v1", "packages", List.of("tinypkg==1.0")));
    JsonNode two =
        call("create_session", Map.of("session_id", "v2", "packages", List.of("tinypkg==2.0")));
    assertThat(strings(one.path("packages"))).containsExactly("tinypkg==1.0");
    assertThat(strings(two.path("packages"))).containsExactly("tinypkg==2.0");
    assertThat(one.path("environment").asText())
        .matches("[0-9a-f]{32}")
        .isNotEqualTo(two.path("environment").asText());
    for (int i = 0; i < 2; i++) {
      assertThat(ran(Map.of("session_id", "v1", "code", HELLO)).path("stdout").asText())
          .isEqualTo(greeting("1.0") + "\n");
      assertThat(ran(Map.of("session_id", "v2", "code", HELLO)).path("stdout").asText())
          .isEqualTo(greeting("2.0") + "\n");
    }

    JsonNode sessions = call("list_sessions", Map.of()).path("sessions");
    List<String> seen = new ArrayList<>();
    sessions.forEach(
        s ->
            seen.add(
                s.path("session_id").asText()
                    + " "
                    + strings(s.path("packages"))
                    + " "
                    + s.path("environment").asText()));
    assertThat(seen)
        .contains(
            "v1 [tinypkg==1.0] " + one.path("environment").asText(),
            "v2 [tinypkg==2.0] " + two.path("environment").asText());

    JsonNode other =
        error(
            "run_python",
            Map.of("session_id", "v1", "code", HELLO, "packages", List.of("tinypkg==2.0")));
    assertThat(other.path("code").asText()).isEqualTo("invalid_argument");
    assertThat(other.path("message").asText()).contains("tinypkg==2.0").contains("v1");
    call("close_session", Map.of("session_id", "v1"));
    call("close_session", Map.of("session_id", "v2"));
  }

  @Test
  void pep723ScriptMetadata_withoutPackagesArgument_installsItsDependencies() {
    String code = "# /// script\n# dependencies = [\"tinypkg==2.0\"]\n# ///\n" + HELLO;
    JsonNode run = ran(Map.of("code", code));
    assertThat(run.path("stdout").asText()).isEqualTo(greeting("2.0") + "\n");
    assertThat(strings(run.path("packages"))).containsExactly("tinypkg==2.0");
  }

  @Test
  void specsThatAreNotPlainRequirements_areRefusedAsInvalidArgument_namingTheSpec() {
    List<String> hostile =
        List.of(
            "numpy; os.system('x')",
            "--index-url=http://evil",
            "../x.whl",
            "git+https://github.com/x/y",
            "tinypkg @ https://x/y.whl");
    List<String> problems = new ArrayList<>();
    for (String spec : hostile) {
      for (String tool : List.of("run_python", "create_session")) {
        Map<String, Object> args =
            tool.equals("run_python")
                ? Map.of("code", "print('ran')", "packages", List.of(spec))
                : Map.of("session_id", "hostile", "packages", List.of(spec));
        CallToolResult r = callTool(tool, args);
        JsonNode error = JSON.valueToTree(r.structuredContent()).path("error");
        if (!Boolean.TRUE.equals(r.isError())
            || !error.path("code").asText().equals("invalid_argument")
            || !error.path("message").asText().contains(spec)) {
          problems.add(tool + " " + spec + ": " + r.structuredContent());
        }
      }
    }
    assertThat(problems).isEmpty();
    assertThat(index.requests("/simple/numpy")).as("nothing was asked of the index").isZero();
    assertThat(call("list_sessions", Map.of()).path("sessions").findValuesAsText("session_id"))
        .doesNotContain("hostile");
  }

  @Test
  void moreThanFiftyPackages_areRefused() {
    List<String> many = new ArrayList<>();
    for (int i = 0; i < 51; i++) {
      many.add("pkg" + i);
    }
    JsonNode e = error("run_python", Map.of("code", "1", "packages", many));
    assertThat(e.path("code").asText()).isEqualTo("invalid_argument");
    assertThat(e.path("message").asText()).contains("50").contains("51");
  }

  @Test
  void aPackageThatDoesNotExist_isEnvironmentFailed_notRetryable_withPipsWords() {
    JsonNode e =
        error("run_python", Map.of("code", "print('ran')", "packages", List.of("nosuchpkg==1.0")));
    assertThat(e.path("code").asText()).isEqualTo("environment_failed");
    assertThat(e.path("retryable").asBoolean(true)).isFalse();
    assertThat(e.path("message").asText())
        .contains("nosuchpkg")
        .containsAnyOf("No matching distribution found", "Could not find a version that satisfies");
    assertThat(index.requests("/simple/nosuchpkg")).as("pip asked the index").isPositive();
  }

  @Test
  void environments_areListed_andCleaning_keepsTheOneAnOpenSessionHas() throws Exception {
    JsonNode session =
        call("create_session", Map.of("session_id", "kept", "packages", List.of("tinypkg==1.0")));
    String key = session.path("environment").asText();
    ran(Map.of("session_id", "kept", "code", HELLO));
    // Another environment, used by a one-shot run and no sandbox after it.
    String other =
        ran(Map.of("code", HELLO, "packages", List.of("tinypkg==2.0")))
            .path("environment")
            .asText();

    JsonNode listed = awaitReleased(other);
    JsonNode mine = environment(listed, key);
    assertThat(mine.path("runs").asLong()).isGreaterThanOrEqualTo(1);
    assertThat(mine.path("in_use").asBoolean()).isTrue();
    assertThat(strings(mine.path("requirements"))).containsExactly("tinypkg==1.0");
    assertThat(mine.path("pip_freeze").asText()).contains("tinypkg==1.0");
    assertThat(mine.path("size_bytes").asLong()).isPositive();
    assertThat(environment(listed, other).path("runs").asLong()).isGreaterThanOrEqualTo(1);
    assertThat(listed.path("total_bytes").asLong())
        .isGreaterThanOrEqualTo(mine.path("size_bytes").asLong());

    JsonNode dry = call("clean_environments", Map.of("older_than_days", 0));
    assertThat(dry.path("dry_run").asBoolean()).isTrue();
    assertThat(strings(dry.path("removed"))).contains(other).doesNotContain(key);
    assertThat(strings(dry.path("kept_in_use"))).contains(key);
    assertThat(keys(call("list_environments", Map.of())))
        .as("a dry run removes nothing")
        .contains(key, other);

    JsonNode cleaned = call("clean_environments", Map.of("older_than_days", 0, "dry_run", false));
    assertThat(cleaned.path("dry_run").asBoolean()).isFalse();
    assertThat(strings(cleaned.path("removed"))).contains(other).doesNotContain(key);
    assertThat(strings(cleaned.path("kept_in_use"))).contains(key);
    assertThat(keys(call("list_environments", Map.of()))).contains(key).doesNotContain(other);
    assertThat(ran(Map.of("session_id", "kept", "code", HELLO)).path("stdout").asText())
        .as("the session still has its packages")
        .isEqualTo(greeting("1.0") + "\n");
    assertThat(
            ran(Map.of("code", HELLO, "packages", List.of("tinypkg==2.0"))).path("stdout").asText())
        .as("a removed environment is built again when asked for")
        .isEqualTo(greeting("2.0") + "\n");
    call("close_session", Map.of("session_id", "kept"));
  }

  /**
   * {@code list_environments} once no sandbox has {@code key}: a one-shot run's sandbox lets its
   * environment go as it is torn down, which may come just after the run's answer.
   */
  static JsonNode awaitReleased(String key) throws InterruptedException {
    return Await.until(
        "environment " + key + " no longer in use",
        Duration.ofSeconds(10),
        () -> call("list_environments", Map.of()),
        listed -> !environment(listed, key).path("in_use").asBoolean());
  }

  static JsonNode environment(JsonNode list, String key) {
    for (JsonNode e : list.path("environments")) {
      if (e.path("key").asText().equals(key)) {
        return e;
      }
    }
    throw new AssertionError("no environment " + key + " in " + list);
  }

  static List<String> keys(JsonNode list) {
    List<String> keys = new ArrayList<>();
    list.path("environments").forEach(e -> keys.add(e.path("key").asText()));
    return keys;
  }

  // -- the way out -------------------------------------------------------------------------------

  @Test
  void basicTier_hasNoWayOut_evenForCodeTheImportPolicyDoesNotWatch() {
    // basic's import policy refuses urllib.request in the run's own code; a child interpreter has
    // no import hook, so what stops it from reaching the proxy must be the sandbox itself.
    String child =
        "import urllib.request\n"
            + "proxy = urllib.request.ProxyHandler({'http': 'http://127.0.0.1:3128'})\n"
            + "try:\n"
            + "    urllib.request.build_opener(proxy).open('"
            + originUrl("/")
            + "', timeout=5)\n"
            + "    print('reached')\n"
            + "except Exception as e:\n"
            + "    print('failed', type(e).__name__)\n";
    String code =
        "import os, subprocess, sys\n"
            + "print('socket', os.path.exists('/run/pysandbox/egress.sock'))\n"
            + "print('proxy', os.environ.get('HTTP_PROXY'))\n"
            + "env = dict(os.environ, HTTP_PROXY='http://127.0.0.1:3128')\n"
            + "r = subprocess.run([sys.executable, '-c', "
            + pyString(child)
            + "], capture_output=True, text=True, timeout=60, env=env)\n"
            + "print(r.stdout + r.stderr, end='')\n";
    int before = originRequests.get();
    JsonNode run = ran(Map.of("code", code));
    assertThat(run.path("tier").asText()).isEqualTo("basic");
    assertThat(run.path("stdout").asText())
        .isEqualTo("socket False\nproxy None\nfailed URLError\n");
    assertThat(originRequests.get()).isEqualTo(before);

    JsonNode denied = call("run_python", Map.of("code", "import urllib.request"));
    assertThat(denied.path("error").path("value").asText())
        .isEqualTo("import of 'urllib.request' is not allowed in tier 'basic'");
  }

  @Test
  void networkTier_reachesAnAllowedHostThroughTheProxy_andIsRefusedOthersWith403()
      throws Exception {
    call("create_session", Map.of("session_id", "net", "tier", "network"));
    String code =
        "import os, urllib.request, urllib.error\n"
            + "print('socket', os.path.exists('/run/pysandbox/egress.sock'))\n"
            + "print('proxy', os.environ['HTTP_PROXY'])\n"
            + "print(urllib.request.urlopen('"
            + originUrl("/")
            + "', timeout=10).read().decode())\n"
            + "for url in ('http://10.1.2.3/', 'http://example.com/'):\n"
            + "    try:\n"
            + "        urllib.request.urlopen(url, timeout=10)\n"
            + "        print('reached', url)\n"
            + "    except urllib.error.HTTPError as e:\n"
            + "        print(e.code, e.read().decode().splitlines()[0])\n";
    int before = originRequests.get();
    JsonNode run = ran(Map.of("session_id", "net", "code", code));
    assertThat(run.path("tier").asText()).isEqualTo("network");
    String[] lines = run.path("stdout").asText().split("\n");
    assertThat(lines).hasSize(5);
    assertThat(lines[0]).isEqualTo("socket True");
    assertThat(lines[1]).isEqualTo("proxy http://127.0.0.1:3128");
    assertThat(lines[2]).isEqualTo(ORIGIN_BODY);
    assertThat(lines[3]).startsWith("403 " + REFUSED).contains("10.1.2.3");
    assertThat(lines[4]).startsWith("403 " + REFUSED).contains("example.com");
    assertThat(originRequests.get()).isEqualTo(before + 1);

    JsonNode allowed = awaitEvents("network_allowed", "net", "127.0.0.1");
    assertThat(allowed.path("detail").path("port").asInt()).isEqualTo(originPort());
    assertThat(allowed.path("detail").path("via").asText()).isEqualTo("network_tier");
    JsonNode denied = awaitEvents("network_denied", "net", "10.1.2.3");
    assertThat(denied.path("detail").path("reason").asText()).isNotBlank();
    awaitEvents("network_denied", "net", "example.com");
    call("close_session", Map.of("session_id", "net"));
  }

  @Test
  void downloadFile_fetchesAnAllowedUrlIntoTheSession_andRefusesAnotherAsForbidden()
      throws Exception {
    JsonNode got =
        call(
            "download_file",
            Map.of("session_id", "dl", "url", originUrl("/data.txt"), "filename", "data.txt"));
    // Relative to /mnt/data, as upload_file's path is.
    assertThat(got.path("path").asText()).isEqualTo("data.txt");
    assertThat(got.path("size_bytes").asLong()).isEqualTo(ORIGIN_BODY.length());
    assertThat(got.path("sha256").asText())
        .isEqualTo(Sha256.hex(ORIGIN_BODY.getBytes(StandardCharsets.UTF_8)));
    assertThat(got.path("status").asInt()).isEqualTo(200);
    JsonNode read =
        ran(Map.of("session_id", "dl", "code", "print(open('/mnt/data/data.txt').read())"));
    assertThat(read.path("stdout").asText()).isEqualTo(ORIGIN_BODY + "\n");

    JsonNode again =
        error(
            "download_file",
            Map.of("session_id", "dl", "url", originUrl("/data.txt"), "filename", "data.txt"));
    assertThat(again.path("code").asText()).isEqualTo("file_exists");

    for (String url : List.of("http://10.1.2.3/x", "http://example.com/x")) {
      JsonNode refused =
          error("download_file", Map.of("session_id", "dl", "url", url, "filename", "refused.txt"));
      assertThat(refused.path("code").asText()).as(refused.toString()).isEqualTo("forbidden");
      assertThat(refused.path("message").asText())
          .startsWith("refused by pysandbox's network policy: ");
    }
    JsonNode files = call("list_artifacts", Map.of("session_id", "dl"));
    assertThat(files.toString()).contains("data.txt").doesNotContain("refused.txt");
    assertThat(awaitEvents("network_denied", "dl", "10.1.2.3").path("detail").path("via").asText())
        .isEqualTo("download_file");
    call("close_session", Map.of("session_id", "dl"));
  }

  @Test
  void downloadFile_whoseOriginFails_isAToolError_sayingWhy_andSavesNothing() {
    call("create_session", Map.of("session_id", "dl-fail"));
    JsonNode missing =
        error(
            "download_file",
            Map.of("session_id", "dl-fail", "url", originUrl("/missing"), "filename", "m.txt"));
    assertThat(missing.path("message").asText()).contains(originUrl("/missing")).contains("404");
    // The same call would get the same 404: not worth retrying.
    assertThat(missing.path("code").asText()).isEqualTo("invalid_argument");
    assertThat(missing.path("retryable").asBoolean()).isFalse();

    JsonNode cut =
        error(
            "download_file",
            Map.of("session_id", "dl-fail", "url", originUrl("/cut-short"), "filename", "c.txt"));
    assertThat(cut.path("message").asText())
        .contains(originUrl("/cut-short"))
        .contains("broke off after")
        .doesNotContain("@");
    assertThat(cut.path("retryable").asBoolean()).isTrue();

    assertThat(call("list_artifacts", Map.of("session_id", "dl-fail")).toString())
        .doesNotContain("m.txt")
        .doesNotContain("c.txt");
    call("close_session", Map.of("session_id", "dl-fail"));
  }

  /** The newest event of {@code kind} in {@code session} whose detail names {@code host}. */
  static JsonNode awaitEvents(String kind, String session, String host) throws Exception {
    JsonNode events =
        Await.until(
            "a " + kind + " event for " + host + " in " + session,
            Duration.ofSeconds(10),
            () ->
                call("list_security_events", Map.of("kind", kind, "session_id", session))
                    .path("events"),
            found -> naming(found, host) != null);
    JsonNode e = naming(events, host);
    assertThat(e.path("kind").asText()).isEqualTo(kind);
    assertThat(e.path("session_id").asText()).isEqualTo(session);
    return e;
  }

  /** The first of {@code events} whose detail names {@code host}, or null. */
  private static JsonNode naming(JsonNode events, String host) {
    for (JsonNode e : events) {
      if (e.path("detail").path("host").asText().equals(host)) {
        return e;
      }
    }
    return null;
  }

  /** {@code s} as a Python string literal. */
  static String pyString(String s) {
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'";
  }

  // -- last: what the server printed --------------------------------------------------------------

  @Test
  @Order(Integer.MAX_VALUE)
  void theServersStderr_holdsNoStackTrace_andItsWorkingDirectoryStaysEmpty() throws Exception {
    call("list_environments", Map.of()); // the server is still answering
    assertThat(serverStderr)
        .as("stderr is collected: the security events are logged there")
        .anySatisfy(l -> assertThat(l).contains("network_denied"));
    List<String> traces =
        serverStderr.stream()
            .filter(l -> l.contains("Exception") || l.matches("\\s+at [\\w.$]+\\(.*"))
            .toList();
    assertThat(traces).as(String.join("\n", serverStderr)).isEmpty();
    try (Stream<Path> files = Files.list(workDir)) {
      assertThat(files.toList()).as("files the server wrote in its working directory").isEmpty();
    }
  }
}

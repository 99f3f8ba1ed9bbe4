package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The real server (bin/pysandbox serve) driven by the MCP SDK's client over stdio. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Client
class McpStdioIT {
  static final String SECRET = "s3cr3t-" + System.nanoTime();

  @TempDir static Path dataDir;
  static McpSyncClient client;
  static final List<String> serverStderr = new CopyOnWriteArrayList<>();
  static final List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
  static final List<McpSchema.LoggingMessageNotification> logged = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void connect() {
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args("serve", "--data-dir", dataDir.toString())
            .addEnvVar("PYSANDBOX_TEST_SECRET", SECRET)
            .addEnvVar("AWS_SECRET_ACCESS_KEY", SECRET)
            .build();
    StdioClientTransport transport = new StdioClientTransport(params, McpJsonDefaults.getMapper());
    transport.setStdErrorHandler(serverStderr::add);
    client =
        McpClient.sync(transport)
            .requestTimeout(Duration.ofSeconds(90))
            .progressConsumer(progress::add)
            .loggingConsumer(logged::add)
            .build();
    client.initialize();
  }

  @AfterAll
  static void disconnect() {
    if (client != null) {
      client.closeGracefully();
    }
  }

  @org.junit.jupiter.api.Test
  @org.junit.jupiter.api.Timeout(value = 60, unit = java.util.concurrent.TimeUnit.SECONDS)
  void runPython_withAProgressToken_reportsProgressEverySecond_withTheLatestLine() {
    String token = "progress-" + System.nanoTime();
    CallToolResult r =
        client.callTool(
            CallToolRequest.builder("run_python")
                .arguments(
                    Map.of(
                        "code",
                        "import time\nfor i in range(4):\n    print('step', i, flush=True)\n"
                            + "    time.sleep(1)\n"))
                .progressToken(token)
                .build());
    assertThat(r.isError()).isFalse();
    List<McpSchema.ProgressNotification> mine =
        progress.stream().filter(p -> token.equals(p.progressToken())).toList();
    assertThat(mine).as("about one a second for a 4 s run").hasSizeBetween(2, 5);
    assertThat(mine.get(0).progress()).isGreaterThanOrEqualTo(1.0);
    assertThat(mine).extracting(McpSchema.ProgressNotification::progress).isSorted();
    assertThat(mine.get(mine.size() - 1).message()).startsWith("step ");
    // a call without a token hears nothing
    int before = progress.size();
    call("run_python", Map.of("code", "import time; time.sleep(1.5)"));
    assertThat(progress).hasSize(before);
  }

  @org.junit.jupiter.api.Test
  @org.junit.jupiter.api.Timeout(value = 60, unit = java.util.concurrent.TimeUnit.SECONDS)
  void outputLines_areLogNotifications_onlyAfterTheClientSetsALevel_andByThatLevel()
      throws Exception {
    String tag = "log" + System.nanoTime();
    String code =
        "import sys\nprint('"
            + tag
            + " out', flush=True)\nprint('"
            + tag
            + " err', file=sys.stderr)\n";
    call("run_python", Map.of("code", code));
    // No sleep for lines that must not come: the stream is in order, so once the next call's two
    // lines are seen, any of this call's would have been seen before them (exactly two, below).
    client.setLoggingLevel(McpSchema.LoggingLevel.INFO);
    call("run_python", Map.of("code", code));
    awaitLogged(tag, 2);
    assertThat(logged.stream().filter(m -> m.data().startsWith(tag)))
        .extracting(m -> m.logger() + " " + m.level() + " " + m.data())
        .containsExactlyInAnyOrder("stdout INFO " + tag + " out", "stderr WARNING " + tag + " err");
    client.setLoggingLevel(McpSchema.LoggingLevel.WARNING);
    String tag2 = tag + "w";
    call(
        "run_python",
        Map.of(
            "code",
            "import sys\nprint('"
                + tag2
                + " out', flush=True)\nprint('"
                + tag2
                + " err', file=sys.stderr)\n"));
    awaitLogged(tag2, 1);
    // A last line at WARNING: once it is seen, tag2's INFO line would have been seen before it.
    String end = tag + "end";
    call("run_python", Map.of("code", "import sys\nprint('" + end + "', file=sys.stderr)\n"));
    awaitLogged(end, 1);
    assertThat(logged.stream().filter(m -> m.data().startsWith(tag2)))
        .extracting(m -> m.logger())
        .containsExactly("stderr");
  }

  private static void awaitLogged(String tag, int n) throws InterruptedException {
    dev.pysandbox.Await.until(
        n + " log lines starting " + tag,
        () -> logged.stream().filter(m -> m.data().startsWith(tag)).count(),
        count -> count >= n);
  }

  static CallToolResult call(String tool, Map<String, Object> args) {
    return client.callTool(CallToolRequest.builder(tool).arguments(args).build());
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> json(CallToolResult r) {
    return (Map<String, Object>) r.structuredContent();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> errorOf(CallToolResult r) {
    assertThat(r.isError()).isTrue();
    return (Map<String, Object>) json(r).get("error");
  }

  @Test
  void toolsList_showsTheToolsWithSchemasAndAnnotations() {
    List<McpSchema.Tool> tools = client.listTools().tools();
    assertThat(tools)
        .extracting(McpSchema.Tool::name)
        .contains("run_python", "list_runs", "get_run", "check_setup");
    McpSchema.Tool run =
        tools.stream().filter(t -> t.name().equals("run_python")).findFirst().orElseThrow();
    Map<String, Object> schema = run.inputSchema();
    assertThat(schema).containsEntry("type", "object").containsEntry("required", List.of("code"));
    assertThat(schema.get("properties").toString())
        .contains("code=", "session_id=", "timeout_seconds=");
    assertThat(run.annotations().readOnlyHint()).isFalse();
    McpSchema.Tool list =
        tools.stream().filter(t -> t.name().equals("list_runs")).findFirst().orElseThrow();
    assertThat(list.annotations().readOnlyHint()).isTrue();
  }

  @Test
  void runPython_print_returns42() {
    CallToolResult r = call("run_python", Map.of("code", "print(6*7)"));
    assertThat(r.isError()).isFalse();
    assertThat(json(r)).containsEntry("status", "succeeded").containsEntry("stdout", "42\n");
    assertThat(((McpSchema.TextContent) r.content().get(0)).text()).contains("42");
  }

  @Test
  void runPython_zeroDivision_failsWithTheUsersLine() {
    CallToolResult r = call("run_python", Map.of("code", "x = 1\ny = x / 0\n"));
    assertThat(r.isError()).isFalse();
    assertThat(json(r)).containsEntry("status", "failed");
    @SuppressWarnings("unchecked")
    Map<String, Object> error = (Map<String, Object>) json(r).get("error");
    assertThat(error).containsEntry("name", "ZeroDivisionError");
    assertThat((String) error.get("traceback")).contains("line 2").contains("y = x / 0");
  }

  @Test
  void runPython_trailingExpression_isTheResult() {
    CallToolResult r = call("run_python", Map.of("code", "1+1"));
    @SuppressWarnings("unchecked")
    Map<String, Object> result = (Map<String, Object>) json(r).get("result");
    assertThat(result).containsEntry("text/plain", "2");
  }

  @Test
  void runs_appearInListRunsAndGetRun() {
    String runId =
        (String) json(call("run_python", Map.of("code", "print('recorded')"))).get("run_id");
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> runs =
        (List<Map<String, Object>>) json(call("list_runs", Map.of("limit", 50))).get("runs");
    assertThat(runs).extracting(m -> m.get("run_id")).contains(runId);
    Map<String, Object> run = json(call("get_run", Map.of("run_id", runId)));
    assertThat(run)
        .containsEntry("run_id", runId)
        .containsEntry("code", "print('recorded')")
        .containsEntry("stdout", "recorded\n")
        .containsEntry("status", "succeeded");
    assertThat(errorOf(call("get_run", Map.of("run_id", "run_0000"))))
        .containsEntry("code", "not_found");
  }

  @Test
  void serverEnvironment_neverReachesTheCode() {
    CallToolResult r =
        call(
            "run_python",
            Map.of(
                "code",
                "import os\n"
                    + "found = [k for k, v in os.environ.items() if '"
                    + SECRET
                    + "' in v or 'SECRET' in k]\n"
                    + "found += ['proc1'] if b'"
                    + SECRET
                    + "' in open('/proc/1/environ', 'rb').read() else []\n"
                    + "found"));
    @SuppressWarnings("unchecked")
    Map<String, Object> result = (Map<String, Object>) json(r).get("result");
    assertThat(result).containsEntry("text/plain", "[]");
  }

  @Test
  void createSession_takesLimits_andAMemoryHogSaysWhichLimitStoppedIt() {
    assertThat(errorOf(call("create_session", Map.of("memory_limit_mb", 1_000_000))))
        .containsEntry("code", "invalid_argument");
    assertThat(errorOf(call("create_session", Map.of("cpu_limit", "lots"))))
        .containsEntry("code", "invalid_argument");
    Map<String, Object> s =
        json(
            call(
                "create_session",
                Map.of("session_id", "mcp-limited", "memory_limit_mb", 96, "pids_limit", 32)));
    assertThat(s.get("limits").toString()).contains("memory_limit_mb=96", "pids_limit=32");
    CallToolResult r =
        call(
            "run_python",
            Map.of(
                "session_id", "mcp-limited", "code", "x = []\nwhile True: x.append(b'1' * 10**6)"));
    assertThat(json(r))
        .containsEntry("status", "failed")
        .containsEntry("kill_reason", "memory_limit");
    assertThat(((McpSchema.TextContent) r.content().get(0)).text())
        .contains("[memory_limit]")
        .contains("memory limit of 96 MiB");
    call("close_session", Map.of("session_id", "mcp-limited"));
  }

  @Test
  void badArguments_getErrorsWithCodes() {
    assertThat(errorOf(call("run_python", Map.of("code", ""))))
        .containsEntry("code", "invalid_argument");
    assertThat(errorOf(call("run_python", Map.of("code", "  \n "))))
        .containsEntry("code", "invalid_argument");
    assertThat(errorOf(call("run_python", Map.of())).get("message").toString())
        .contains("'code' is required");
    assertThat(errorOf(call("run_python", Map.of("code", "x" + "=1\n".repeat(40_000)))))
        .containsEntry("code", "code_too_large");
    assertThat(errorOf(call("run_python", Map.of("code", "print(1)", "timeout_seconds", 99999))))
        .containsEntry("code", "invalid_argument");
    assertThat(
            errorOf(call("run_python", Map.of("code", "print(1)", "bogus", 1)))
                .get("message")
                .toString())
        .contains("unknown argument 'bogus'");
    assertThat(errorOf(call("run_python", Map.of("code", 42))))
        .containsEntry("code", "invalid_argument");
    assertThat(errorOf(call("list_runs", Map.of("status", "nope"))))
        .containsEntry("code", "invalid_argument");
  }

  @Test
  void matplotlibChart_comesBackAsImageContent() {
    CallToolResult r =
        call(
            "run_python",
            Map.of(
                "code",
                "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title('squares')"));
    assertThat(json(r)).containsEntry("status", "succeeded");
    assertThat(r.content())
        .anySatisfy(c -> assertThat(c).isInstanceOf(McpSchema.ImageContent.class));
  }

  @Test
  void sessionTools_keepStateAndFiles_andReportErrorsWithCodes() {
    Map<String, Object> created = json(call("create_session", Map.of("session_id", "mcp-s")));
    assertThat(created).containsEntry("state", "idle");
    call("run_python", Map.of("session_id", "mcp-s", "code", "x = 21"));
    assertThat(
            json(call("run_python", Map.of("session_id", "mcp-s", "code", "x * 2")))
                .get("result")
                .toString())
        .contains("42");
    assertThat(
            json(
                call(
                    "upload_file",
                    Map.of("session_id", "mcp-s", "filename", "in.txt", "content", "hello"))))
        .containsEntry("path", "in.txt");
    CallToolResult chart =
        call(
            "run_python",
            Map.of(
                "session_id",
                "mcp-s",
                "code",
                "import matplotlib.pyplot as plt\nplt.bar([1, 2], [3, 4])\nopen('in.txt').read()"));
    assertThat(chart.content())
        .anySatisfy(c -> assertThat(c).isInstanceOf(McpSchema.ImageContent.class));
    assertThat(json(call("read_artifact", Map.of("session_id", "mcp-s", "path", "in.txt"))))
        .containsEntry("content", "hello");
    assertThat(
            errorOf(call("read_artifact", Map.of("session_id", "mcp-s", "path", "../etc/passwd"))))
        .containsEntry("code", "invalid_argument");
    assertThat(
            errorOf(
                call(
                    "upload_file",
                    Map.of("session_id", "mcp-s", "filename", "in.txt", "content", "again"))))
        .containsEntry("code", "file_exists");
    assertThat(errorOf(call("create_session", Map.of("session_id", "../../tmp/x"))))
        .containsEntry("code", "invalid_argument");
    assertThat(
            json(call("get_context", Map.of("session_id", "mcp-s", "names", List.of("x"))))
                .get("variables")
                .toString())
        .contains("value=21");
    call("clear_context", Map.of("session_id", "mcp-s"));
    @SuppressWarnings("unchecked")
    Map<String, Object> err =
        (Map<String, Object>)
            json(call("run_python", Map.of("session_id", "mcp-s", "code", "x"))).get("error");
    assertThat(err).containsEntry("name", "NameError");
    assertThat(json(call("list_sessions", Map.of())).get("sessions").toString()).contains("mcp-s");
    assertThat(json(call("close_session", Map.of("session_id", "mcp-s"))))
        .containsEntry("state", "closed");
    assertThat(errorOf(call("close_session", Map.of("session_id", "mcp-s"))))
        .containsEntry("code", "session_closed");
    assertThat(errorOf(call("close_session", Map.of("session_id", "never-made"))))
        .containsEntry("code", "not_found");
  }

  @Test
  void checkSetup_reportsReady() {
    Map<String, Object> report = json(call("check_setup", Map.of()));
    assertThat(report).containsEntry("ready", true);
    assertThat(report.get("data_dir")).isEqualTo(dataDir.toString());
    assertThat(report.get("interpreter").toString()).contains("numpy");
  }

  @Test
  void everyTool_hasAnOutputSchema_describedParameters_andNothingNotBuiltYet() {
    for (McpSchema.Tool tool : client.listTools().tools()) {
      assertThat(tool.outputSchema()).as(tool.name()).containsEntry("type", "object");
      @SuppressWarnings("unchecked")
      Map<String, Map<String, Object>> props =
          (Map<String, Map<String, Object>>) tool.inputSchema().get("properties");
      props.forEach(
          (name, schema) ->
              assertThat(schema).as(tool.name() + "." + name).containsKey("description"));
    }
    McpSchema.Tool run =
        client.listTools().tools().stream()
            .filter(t -> t.name().equals("run_python"))
            .findFirst()
            .orElseThrow();
    assertThat(run.description()).contains("no network").contains("numpy");
    McpSchema.Tool list =
        client.listTools().tools().stream()
            .filter(t -> t.name().equals("list_runs"))
            .findFirst()
            .orElseThrow();
    assertThat(list.inputSchema().toString())
        .doesNotContain("pending")
        .doesNotContain("awaiting_approval")
        .doesNotContain("rejected");
  }

  @Test
  void structuredContent_matchesTheOutputSchema_forResultsAndErrors() {
    var validator = McpJsonDefaults.getSchemaValidator();
    Map<String, McpSchema.Tool> tools = new java.util.HashMap<>();
    client.listTools().tools().forEach(t -> tools.put(t.name(), t));
    CallToolResult ok = call("run_python", Map.of("code", "raise ValueError('x')"));
    CallToolResult bad = call("run_python", Map.of("code", ""));
    CallToolResult page = call("list_runs", Map.of("limit", 2));
    CallToolResult missing = call("get_run", Map.of("run_id", "run_0000"));
    for (var pair :
        List.of(
            Map.entry("run_python", ok),
            Map.entry("run_python", bad),
            Map.entry("list_runs", page),
            Map.entry("get_run", missing))) {
      var verdict =
          validator.validate(
              tools.get(pair.getKey()).outputSchema(), pair.getValue().structuredContent());
      assertThat(verdict.valid()).as(pair.getKey() + ": " + verdict.errorMessage()).isTrue();
    }
  }

  @Test
  void chart_isSentOnceAsImageContent_withItsDescriptionAndAResourceUri() {
    CallToolResult r =
        call(
            "run_python",
            Map.of("code", "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('t')"));
    List<McpSchema.ImageContent> images =
        r.content().stream()
            .filter(McpSchema.ImageContent.class::isInstance)
            .map(McpSchema.ImageContent.class::cast)
            .toList();
    assertThat(images).hasSize(1);
    @SuppressWarnings("unchecked")
    Map<String, Object> png =
        (Map<String, Object>)
            ((List<Map<String, Object>>) json(r).get("displays")).get(0).get("image/png");
    assertThat(png)
        .containsEntry("media_type", "image/png")
        .containsEntry("content_index", 1)
        .containsKeys("size_bytes", "sha256", "uri");
    assertThat(json(r).toString()).doesNotContain(images.get(0).data().substring(0, 200));
    McpSchema.ReadResourceResult again =
        client.readResource(McpSchema.ReadResourceRequest.builder((String) png.get("uri")).build());
    assertThat(((McpSchema.BlobResourceContents) again.contents().get(0)).blob())
        .isEqualTo(images.get(0).data());
  }

  @Test
  void bigStdout_isCappedInTheToolResult_whileGetRunReturnsTheRecord() {
    CallToolResult r = call("run_python", Map.of("code", "print('x' * 3_000_000)"));
    String shown = (String) json(r).get("stdout");
    assertThat(shown.length()).isLessThan(70_000);
    assertThat(shown).contains("not shown here (result_output_limit)");
    assertThat(json(r)).containsEntry("stdout_truncated", true).containsKey("stdout_omitted_bytes");
    String recorded =
        (String) json(call("get_run", Map.of("run_id", json(r).get("run_id")))).get("stdout");
    assertThat(recorded.length()).isGreaterThan(500_000);
  }
}

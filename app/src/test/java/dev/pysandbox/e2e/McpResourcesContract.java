package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.api.Json;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * MCP resources and prompts as a client sees them, written once and run over each transport by the
 * real MCP SDK client against the real server ({@link McpStdioResourcesIT}, {@link
 * HttpMcpResourcesIT}).
 */
abstract class McpResourcesContract {
  /** A client of one tenant's, whose resource-updated notifications land in {@link #updates}. */
  abstract McpSyncClient client();

  /** The contents the client read when told a resource it subscribed to changed. */
  abstract BlockingQueue<McpSchema.ResourceContents> updates();

  CallToolResult call(String tool, Map<String, Object> args) {
    return client().callTool(CallToolRequest.builder(tool).arguments(args).build());
  }

  @SuppressWarnings("unchecked")
  Map<String, Object> run(Map<String, Object> args) {
    CallToolResult r = call("run_python", args);
    assertThat(r.isError()).as(String.valueOf(r.content())).isFalse();
    return (Map<String, Object>) r.structuredContent();
  }

  McpSchema.ReadResourceResult read(String uri) {
    return client().readResource(McpSchema.ReadResourceRequest.builder(uri).build());
  }

  static McpError errorOf(Runnable call) {
    try {
      call.run();
    } catch (McpError e) {
      return e;
    }
    throw new AssertionError("expected an MCP error");
  }

  static McpSchema.GetPromptRequest promptRequest(String name, Map<String, Object> arguments) {
    return McpSchema.GetPromptRequest.builder(name).arguments(arguments).build();
  }

  static int code(McpError e) {
    return e.getJsonRpcError().code();
  }

  @SuppressWarnings("unchecked")
  static String dataCode(McpError e) {
    return e.getJsonRpcError().data() instanceof Map<?, ?> m ? String.valueOf(m.get("code")) : null;
  }

  // -- listing -----------------------------------------------------------------------------------

  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void resourcesList_pagesTheTenantsRunsNewestFirst_withACursor() {
    String marker = "page-" + System.nanoTime();
    List<String> made = new ArrayList<>();
    for (int i = 0; i < 52; i++) {
      made.add(
          (String)
              run(Map.of("code", "# " + marker + " " + i, "session_id", "pages")).get("run_id"));
    }
    // listResources() follows every cursor itself: a page is asked for by its cursor (none first)
    McpSchema.ListResourcesResult first = client().listResources((String) null);
    assertThat(first.resources()).hasSize(50);
    assertThat(first.nextCursor()).isNotBlank();
    assertThat(first.resources().get(0).uri()).isEqualTo("pysandbox://runs/" + made.get(51));
    assertThat(first.resources().get(0).name()).isEqualTo(made.get(51));
    assertThat(first.resources().get(0).mimeType()).isEqualTo("application/json");
    assertThat(first.resources().get(0).description()).startsWith("succeeded").contains(marker);
    assertThat(first.resources().get(1).uri()).endsWith(made.get(50));
    McpSchema.ListResourcesResult second = client().listResources(first.nextCursor());
    assertThat(second.resources()).isNotEmpty();
    assertThat(second.resources().get(0).uri()).endsWith(made.get(1));
    assertThat(second.resources().get(1).uri()).endsWith(made.get(0));
    List<String> all = new ArrayList<>();
    first.resources().forEach(r -> all.add(r.uri()));
    second.resources().forEach(r -> all.add(r.uri()));
    assertThat(all).doesNotHaveDuplicates();
    McpSchema.ListResourcesResult last = second;
    while (last.nextCursor() != null) {
      last = client().listResources(last.nextCursor());
    }
    assertThat(last.nextCursor()).isNull();
    assertThat(client().listResources().resources())
        .extracting(McpSchema.Resource::uri)
        .as("every page, as the SDK client gathers them")
        .containsAll(made.stream().map(id -> "pysandbox://runs/" + id).toList());

    McpError bad = errorOf(() -> client().listResources("not-a-cursor"));
    assertThat(code(bad)).isEqualTo(McpSchema.ErrorCodes.INVALID_PARAMS);
    assertThat(bad.getMessage()).contains("cursor");
  }

  @Test
  void templatesList_namesEveryTemplate() {
    List<McpSchema.ResourceTemplate> templates =
        client().listResourceTemplates().resourceTemplates();
    assertThat(templates)
        .extracting(McpSchema.ResourceTemplate::uriTemplate)
        .containsExactlyInAnyOrder(
            "pysandbox://runs/{run_id}",
            "pysandbox://runs/{run_id}/files/{+path}",
            "pysandbox://sessions/{session_id}/files/{+path}",
            "pysandbox://runs/{run_id}/displays/{index}",
            "pysandbox://runs/{run_id}/result");
    assertThat(templates).allSatisfy(t -> assertThat(t.description()).isNotBlank());
  }

  // -- reading -----------------------------------------------------------------------------------

  @Test
  void readRun_isTheRecordAsJson_codeIncluded() {
    Map<String, Object> r = run(Map.of("code", "print('read me')\n1/0"));
    String uri = "pysandbox://runs/" + r.get("run_id");
    McpSchema.ReadResourceResult read = read(uri);
    assertThat(read.contents()).hasSize(1);
    McpSchema.TextResourceContents text = (McpSchema.TextResourceContents) read.contents().get(0);
    assertThat(text.uri()).isEqualTo(uri);
    assertThat(text.mimeType()).isEqualTo("application/json");
    JsonNode record = parse(text.text());
    assertThat(record.path("run_id").asText()).isEqualTo(r.get("run_id"));
    assertThat(record.path("status").asText()).isEqualTo("failed");
    assertThat(record.path("stdout").asText()).isEqualTo("read me\n");
    assertThat(record.path("code").asText()).isEqualTo("print('read me')\n1/0");
    assertThat(record.path("error").path("name").asText()).isEqualTo("ZeroDivisionError");
  }

  @Test
  void readRun_aChart_isNamedInTheRecordByItsUri_whichReadsThePng() {
    Map<String, Object> r =
        run(Map.of("code", "import matplotlib.pyplot as plt\nplt.plot([1, 2, 4])\nplt.show()"));
    String uri = "pysandbox://runs/" + r.get("run_id");
    JsonNode record = parse(((McpSchema.TextResourceContents) read(uri).contents().get(0)).text());
    JsonNode png = record.path("displays").path(0).path("image/png");
    assertThat(png.path("uri").asText()).isEqualTo(uri + "/displays/0");
    assertThat(png.path("media_type").asText()).isEqualTo("image/png");
    assertThat(png.path("size_bytes").asLong()).isPositive();
    McpSchema.BlobResourceContents image =
        (McpSchema.BlobResourceContents) read(png.path("uri").asText()).contents().get(0);
    assertThat(Base64.getDecoder().decode(image.blob())).hasSize(png.path("size_bytes").asInt());
  }

  static JsonNode parse(String json) {
    try {
      return Json.mapper().readTree(json);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void readRunFile_textInASubdirectory_isText_andAPng_isABlob() throws Exception {
    Map<String, Object> r =
        run(
            Map.of(
                "code",
                "import os\n"
                    + "os.makedirs('/mnt/data/out', exist_ok=True)\n"
                    + "open('/mnt/data/out/notes 1.txt', 'w').write('first line\\nsecond')\n"
                    + "import matplotlib\nmatplotlib.use('Agg')\n"
                    + "import matplotlib.pyplot as plt\n"
                    + "plt.plot([1, 3, 2])\nplt.savefig('/mnt/data/plot.png')\n",
                "session_id",
                "files-" + System.nanoTime()));
    String runUri = "pysandbox://runs/" + r.get("run_id");
    McpSchema.TextResourceContents notes =
        (McpSchema.TextResourceContents)
            read(runUri + "/files/out/notes%201.txt").contents().get(0);
    assertThat(notes.text()).isEqualTo("first line\nsecond");
    assertThat(notes.mimeType()).isEqualTo("text/plain");
    assertThat(notes.uri()).isEqualTo(runUri + "/files/out/notes%201.txt");

    McpSchema.BlobResourceContents png =
        (McpSchema.BlobResourceContents) read(runUri + "/files/plot.png").contents().get(0);
    assertThat(png.mimeType()).isEqualTo("image/png");
    byte[] bytes = Base64.getDecoder().decode(png.blob());
    assertThat(bytes).startsWith(0x89, 'P', 'N', 'G');
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> artifacts = (List<Map<String, Object>>) r.get("artifacts");
    String sha =
        artifacts.stream()
            .filter(a -> a.get("path").equals("plot.png"))
            .map(a -> (String) a.get("sha256"))
            .findFirst()
            .orElseThrow();
    assertThat(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)))
        .isEqualTo(sha);

    McpError missing = errorOf(() -> read(runUri + "/files/nothing.txt"));
    assertThat(code(missing)).isEqualTo(McpSchema.ErrorCodes.RESOURCE_NOT_FOUND);
    McpError escape = errorOf(() -> read(runUri + "/files/%2E%2E/%2E%2E/etc/passwd"));
    assertThat(code(escape)).isEqualTo(McpSchema.ErrorCodes.INVALID_PARAMS);
  }

  @Test
  void readSessionFile_isTheFileAsItIsNow_whileTheRunsFileIsAsThatRunLeftIt() {
    String session = "now-" + System.nanoTime();
    String first =
        (String)
            run(Map.of(
                    "code", "open('/mnt/data/state.txt','w').write('one')", "session_id", session))
                .get("run_id");
    run(Map.of("code", "open('/mnt/data/state.txt','w').write('two')", "session_id", session));
    McpSchema.TextResourceContents now =
        (McpSchema.TextResourceContents)
            read("pysandbox://sessions/" + session + "/files/state.txt").contents().get(0);
    assertThat(now.text()).isEqualTo("two");
    McpSchema.TextResourceContents then =
        (McpSchema.TextResourceContents)
            read("pysandbox://runs/" + first + "/files/state.txt").contents().get(0);
    assertThat(then.text()).isEqualTo("one");
  }

  @Test
  void readSessionFile_aSymlinkInTheWorkspace_isNotFollowed() {
    String session = "links-" + System.nanoTime();
    run(
        Map.of(
            "code",
            "import os\n"
                + "open('/mnt/data/real.txt','w').write('inside')\n"
                + "os.symlink('/etc/hostname', '/mnt/data/host.txt')\n"
                + "os.symlink('real.txt', '/mnt/data/alias.txt')\n"
                + "os.symlink('/etc', '/mnt/data/etc')\n",
            "session_id",
            session));
    String base = "pysandbox://sessions/" + session + "/files/";
    for (String path : List.of("host.txt", "alias.txt", "etc/hostname")) {
      McpError e = errorOf(() -> read(base + path));
      assertThat(code(e)).as(path).isEqualTo(McpSchema.ErrorCodes.INVALID_PARAMS);
      assertThat(dataCode(e)).as(path).isEqualTo("forbidden");
      assertThat(e.getMessage()).as(path).contains("link");
    }
    assertThat(((McpSchema.TextResourceContents) read(base + "real.txt").contents().get(0)).text())
        .isEqualTo("inside");
  }

  @Test
  void readUnknownRunOrSession_isResourceNotFound() {
    for (String uri :
        List.of(
            "pysandbox://runs/run_00000000000000000000",
            "pysandbox://runs/run_00000000000000000000/files/a.txt",
            "pysandbox://sessions/nobody-has-this/files/a.txt",
            "pysandbox://elsewhere/x")) {
      McpError e = errorOf(() -> read(uri));
      assertThat(code(e)).as(uri).isEqualTo(McpSchema.ErrorCodes.RESOURCE_NOT_FOUND);
    }
  }

  // -- subscribing -------------------------------------------------------------------------------

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void subscribe_toARunningRun_isNotifiedWhenItEnds() throws Exception {
    String marker = "sub-" + System.nanoTime();
    AtomicBoolean ended = new AtomicBoolean();
    CompletableFuture<Map<String, Object>> running =
        CompletableFuture.supplyAsync(
            () -> {
              Map<String, Object> r =
                  retryingSend(
                      () ->
                          run(
                              Map.of(
                                  "code",
                                  "# " + marker + "\nimport time\ntime.sleep(3)\nprint('done')")));
              ended.set(true);
              return r;
            });
    String uri = awaitRunning(marker);
    client().subscribeResource(McpSchema.SubscribeRequest.builder(uri).build());
    assertThat(ended).as("subscribed while the run still ran").isFalse();
    McpSchema.ResourceContents update = awaitUpdate(uri, 30);
    String text = ((McpSchema.TextResourceContents) update).text();
    assertThat(parse(text).path("status").asText()).isEqualTo("succeeded");
    assertThat(parse(text).path("stdout").asText()).isEqualTo("done\n");
    assertThat(running.get(60, TimeUnit.SECONDS).get("run_id")).isEqualTo(uri.substring(17));
    assertThat(updates().poll(1, TimeUnit.SECONDS)).as("told once").isNull();
  }

  @Test
  void subscribe_toAFinishedRun_isNotifiedAtOnce_andUnsubscribeIsQuiet() throws Exception {
    String uri = "pysandbox://runs/" + run(Map.of("code", "print(2)")).get("run_id");
    client().subscribeResource(McpSchema.SubscribeRequest.builder(uri).build());
    // Told without another change to the run: the one update is the subscription's own.
    awaitUpdate(uri, 10);
    client().unsubscribeResource(McpSchema.UnsubscribeRequest.builder(uri).build());
    client()
        .unsubscribeResource(
            McpSchema.UnsubscribeRequest.builder("pysandbox://runs/never").build());
  }

  @Test
  void subscribe_toWhatIsNotARunOfTheCaller_isRefused() {
    McpError unknown =
        errorOf(
            () ->
                client()
                    .subscribeResource(
                        McpSchema.SubscribeRequest.builder(
                                "pysandbox://runs/run_00000000000000000000")
                            .build()));
    assertThat(code(unknown)).isEqualTo(McpSchema.ErrorCodes.RESOURCE_NOT_FOUND);
    McpError elsewhere =
        errorOf(
            () ->
                client()
                    .subscribeResource(
                        McpSchema.SubscribeRequest.builder("test://watched").build()));
    assertThat(code(elsewhere)).isEqualTo(McpSchema.ErrorCodes.RESOURCE_NOT_FOUND);
    String run =
        (String)
            run(Map.of("code", "open('/mnt/data/f.txt','w').write('x')", "session_id", "subf"))
                .get("run_id");
    McpError file =
        errorOf(
            () ->
                client()
                    .subscribeResource(
                        McpSchema.SubscribeRequest.builder(
                                "pysandbox://runs/" + run + "/files/f.txt")
                            .build()));
    assertThat(code(file)).isEqualTo(McpSchema.ErrorCodes.INVALID_PARAMS);
  }

  String awaitRunning(String marker) throws InterruptedException {
    return Await.until(
            "the run " + marker + " shows as running",
            Duration.ofSeconds(30),
            () ->
                retryingSend(() -> client().listResources().resources()).stream()
                    .filter(
                        r ->
                            r.description().contains(marker)
                                && r.description().startsWith("running"))
                    .toList(),
            running -> !running.isEmpty())
        .get(0)
        .uri();
  }

  /**
   * A call made while another thread makes one: the SDK's stdio client transport refuses a message
   * sent while another is being sent ("Failed to enqueue message", Reactor's "Spec. Rule 1.3"); the
   * message is dropped, not the connection, so it is sent again.
   */
  static <T> T retryingSend(java.util.function.Supplier<T> call) {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (RuntimeException e) {
        if (attempt == 50 || !String.valueOf(e.getMessage()).contains("Failed to enqueue")) {
          throw e;
        }
        java.util.concurrent.locks.LockSupport.parkNanos(20_000_000);
      }
    }
  }

  McpSchema.ResourceContents awaitUpdate(String uri, int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      McpSchema.ResourceContents c = updates().poll(100, TimeUnit.MILLISECONDS);
      if (c != null && c.uri().equals(uri)) {
        return c;
      }
    }
    throw new AssertionError("no notifications/resources/updated for " + uri);
  }

  // -- prompts -----------------------------------------------------------------------------------

  @Test
  void promptsList_offersAnalyzeDataAndExplainRun_withTheirRequiredArguments() {
    List<McpSchema.Prompt> prompts = client().listPrompts().prompts();
    assertThat(prompts)
        .extracting(McpSchema.Prompt::name)
        .containsExactlyInAnyOrder("analyze_data", "explain_run");
    for (McpSchema.Prompt p : prompts) {
      assertThat(p.description()).isNotBlank();
      assertThat(p.arguments()).hasSize(1);
      assertThat(p.arguments().get(0).required()).isTrue();
    }
    assertThat(prompts)
        .filteredOn(p -> p.name().equals("analyze_data"))
        .singleElement()
        .satisfies(p -> assertThat(p.arguments().get(0).name()).isEqualTo("filename"));
    assertThat(prompts)
        .filteredOn(p -> p.name().equals("explain_run"))
        .singleElement()
        .satisfies(p -> assertThat(p.arguments().get(0).name()).isEqualTo("run_id"));
  }

  @Test
  void promptsGet_analyzeData_guidesUploadPandasSummaryAndPlots() {
    McpSchema.GetPromptResult r =
        client().getPrompt(promptRequest("analyze_data", Map.of("filename", "sales.xlsx")));
    assertThat(r.messages()).hasSize(1);
    assertThat(r.messages().get(0).role()).isEqualTo(McpSchema.Role.USER);
    String text = ((McpSchema.TextContent) r.messages().get(0).content()).text();
    assertThat(text)
        .contains("upload_file", "run_python", "pd.read_excel(\"/mnt/data/sales.xlsx\")")
        .contains("describe", "plt.show()", "summary");
    McpError none = errorOf(() -> client().getPrompt(promptRequest("analyze_data", Map.of())));
    assertThat(code(none)).isEqualTo(McpSchema.ErrorCodes.INVALID_PARAMS);
    assertThat(none.getMessage()).contains("filename");
  }

  @Test
  void promptsGet_explainRun_carriesTheCodeStatusOutputAndError() {
    Map<String, Object> r =
        run(
            Map.of(
                "code",
                "print('before')\nimport sys\nprint('oops', file=sys.stderr)\n{}['missing']"));
    String runId = (String) r.get("run_id");
    McpSchema.GetPromptResult p =
        client().getPrompt(promptRequest("explain_run", Map.of("run_id", runId)));
    String text = ((McpSchema.TextContent) p.messages().get(0).content()).text();
    assertThat(text)
        .contains(runId, "Status: failed", "{}['missing']", "before", "oops", "KeyError", "fix");
    assertThat(p.description()).contains(runId);

    McpError unknown =
        errorOf(
            () ->
                client()
                    .getPrompt(
                        promptRequest(
                            "explain_run", Map.of("run_id", "run_00000000000000000000"))));
    assertThat(code(unknown)).isEqualTo(McpSchema.ErrorCodes.INVALID_PARAMS);
    assertThat(dataCode(unknown)).isEqualTo("not_found");
  }
}

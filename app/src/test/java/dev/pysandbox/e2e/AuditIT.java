package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit trail as a client and a reviewer meet it: the real server over stdio (the MCP SDK's
 * client), notebooks of real runs checked by nbformat, the marimo file re-run with plain python in
 * a sandbox, caller text that tries to become code, rerun / diff / delete / purge / export as
 * tools, and {@code pysandbox runs verify} from another directory noticing one changed byte.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class AuditIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String HOSTILE = "x\"\"\"\nimport os; open('pwned', 'w').write('1')\n\"\"\"#";

  @TempDir static Path dataDir;
  @TempDir static Path elsewhere;
  static McpSyncClient client;

  @BeforeAll
  static void connect() {
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args("serve", "--data-dir", dataDir.toString())
            .build();
    client =
        McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
            .requestTimeout(Duration.ofSeconds(90))
            .build();
    client.initialize();
  }

  @AfterAll
  static void disconnect() {
    if (client != null) {
      client.closeGracefully();
    }
  }

  static JsonNode call(String tool, Map<String, Object> args) {
    CallToolResult r = client.callTool(CallToolRequest.builder(tool).arguments(args).build());
    JsonNode json = JSON.valueToTree(r.structuredContent());
    assertThat(r.isError()).as("%s: %s", tool, json).isFalse();
    return json;
  }

  static JsonNode error(String tool, Map<String, Object> args) {
    CallToolResult r = client.callTool(CallToolRequest.builder(tool).arguments(args).build());
    assertThat(r.isError()).as(tool).isTrue();
    return JSON.valueToTree(r.structuredContent()).path("error");
  }

  static JsonNode withNotebook(String runId) {
    return call("get_run", Map.of("run_id", runId, "include_notebook_source", true));
  }

  /** nbformat's own validation of a notebook file, by Debian's python3-nbformat. */
  static String nbformatValidate(Path notebook) throws Exception {
    Process p =
        new ProcessBuilder(
                "/usr/bin/python3",
                "-c",
                "import nbformat, sys\n"
                    + "nb = nbformat.read(sys.argv[1], as_version=4)\n"
                    + "nbformat.validate(nb)\n"
                    + "print(nb.nbformat, nb.nbformat_minor, ' '.join(o.output_type for c in"
                    + " nb.cells if c.cell_type == 'code' for o in c.outputs))",
                notebook.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out.strip();
  }

  @Test
  void notebooksOfRealRuns_areValidNbformat45_withTheirRealOutputs() throws Exception {
    Map<String, String> cases =
        Map.of(
            "print('plain')",
            "4 5 stream",
            "print('before')\n1/0",
            "error",
            "import pandas as pd\npd.DataFrame({'a': [1, 2]})",
            "execute_result",
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
                + "plt.plot([1, 2, 3])\nplt.show()",
            "display_data",
            "print('going', flush=True)\nwhile True: pass",
            "stream");
    for (Map.Entry<String, String> c : cases.entrySet()) {
      Map<String, Object> args = new java.util.HashMap<>(Map.of("code", c.getKey()));
      if (c.getKey().startsWith("print('going'")) {
        args.put("timeout_seconds", 2);
      }
      String runId = call("run_python", args).path("run_id").asText();
      JsonNode got = withNotebook(runId);
      Path ipynb = Path.of(got.path("notebook_ipynb_path").asText());
      assertThat(nbformatValidate(ipynb)).as(c.getKey()).contains(c.getValue());
      JsonNode nb = JSON.readTree(ipynb.toFile());
      assertThat(nb.path("metadata").path("pysandbox").path("run_id").asText()).isEqualTo(runId);
      if (c.getKey().contains("DataFrame")) {
        assertThat(nb.toString()).contains("text/html");
      }
      if (c.getKey().contains("plt")) {
        assertThat(nb.toString()).contains("image/png");
      }
      if (c.getKey().contains("while True")) {
        assertThat(got.path("status").asText()).isEqualTo("timed_out");
        assertThat(nb.toString()).containsIgnoringCase("time");
      }
    }
  }

  @Test
  void theMarimoFile_runWithPlainPythonInASandbox_printsWhatTheRunPrinted_andNoCallerTextRuns() {
    String code =
        "x = 6\ntext = '''line one\n\n    \n  indented'''\nprint(text)\nprint('x is', x * 7)\n";
    JsonNode run =
        call("run_python", Map.of("code", code, "session_id", "nb-source", "description", HOSTILE));
    String stdout = run.path("stdout").asText();
    assertThat(stdout).contains("x is 42");
    String source = withNotebook(run.path("run_id").asText()).path("notebook_source").asText();
    assertThat(source).contains("import marimo").contains("app = marimo.App(");

    call(
        "upload_file",
        Map.of("session_id", "nb-replay", "filename", "notebook.py", "content", source));
    JsonNode replay =
        call(
            "run_python",
            Map.of(
                "session_id",
                "nb-replay",
                "code",
                "import os, subprocess, sys\n"
                    + "r = subprocess.run([sys.executable, 'notebook.py'], capture_output=True,"
                    + " text=True, timeout=60)\n"
                    + "print(r.stdout, end='')\n"
                    + "print('exit', r.returncode, 'pwned', os.path.exists('pwned'),"
                    + " file=sys.stderr)\n"));
    assertThat(replay.path("stdout").asText()).isEqualTo(stdout);
    assertThat(replay.path("stderr").asText()).contains("exit 0 pwned False");
  }

  @Test
  void rerunDiffDeleteAndPurge_asTools() {
    String parent =
        call("run_python", Map.of("code", "print('v1')\n1/0", "description", "first"))
            .path("run_id")
            .asText();
    JsonNode child = call("rerun", Map.of("run_id", parent, "code", "print('v2')"));
    assertThat(child.path("parent_run_id").asText()).isEqualTo(parent);
    assertThat(child.path("status").asText()).isEqualTo("succeeded");
    assertThat(child.path("description").asText()).isEqualTo("first");
    assertThat(child.path("interpreter").asText()).startsWith("3.");
    assertThat(child.path("env_hash").asText()).hasSize(64);

    JsonNode diff = call("diff_runs", Map.of("run_id", child.path("run_id").asText()));
    assertThat(diff.path("relationship").asText()).isEqualTo("parent_child");
    assertThat(diff.path("code_diff").asText()).contains("-print('v1')").contains("+print('v2')");
    assertThat(diff.path("summary").asText()).contains("succeed");
    assertThat(error("diff_runs", Map.of("run_id", parent)).path("code").asText())
        .isEqualTo("invalid_argument");

    JsonNode dry = call("purge_runs", Map.of("older_than_days", 0));
    assertThat(dry.path("dry_run").asBoolean()).isTrue();
    assertThat(dry.path("runs").asLong()).isPositive();
    call("get_run", Map.of("run_id", parent));

    JsonNode deleted = call("delete_run", Map.of("run_id", parent));
    assertThat(deleted.path("deleted").asBoolean()).isTrue();
    assertThat(error("get_run", Map.of("run_id", parent)).path("code").asText())
        .isEqualTo("not_found");
    assertThat(error("delete_run", Map.of("run_id", parent)).path("code").asText())
        .isEqualTo("not_found");
  }

  @Test
  void exportSession_isTheSessionsRunsInOrder_asAValidNotebook() throws Exception {
    for (String step : List.of("a = 1\nprint('STEP-ONE')", "print('STEP-TWO')\n1/0", "a + 1")) {
      call("run_python", Map.of("session_id", "exported", "code", step));
    }
    call("close_session", Map.of("session_id", "exported"));
    JsonNode e = call("export_session", Map.of("session_id", "exported"));
    assertThat(e.path("run_count").asInt()).isEqualTo(3);
    assertThat(e.path("failed_count").asInt()).isEqualTo(1);
    assertThat(e.has("path")).as("no host path on the wire").isFalse();
    String content = e.path("content").asText();
    assertThat(content.indexOf("STEP-ONE")).isPositive().isLessThan(content.indexOf("STEP-TWO"));
    Path file = Files.createTempFile(elsewhere, "export", ".ipynb");
    Files.writeString(file, content);
    assertThat(nbformatValidate(file)).startsWith("4 5");

    JsonNode marimo = call("export_session", Map.of("session_id", "exported", "format", "marimo"));
    assertThat(marimo.path("content").asText()).contains("@app.cell");
    assertThat(error("export_session", Map.of("session_id", "exported", "format", "pdf")))
        .isNotNull();
  }

  @Test
  void runsVerify_fromAnotherDirectory_passes_thenNamesTheRunWhoseKeptFileChanged()
      throws Exception {
    JsonNode run =
        call("run_python", Map.of("code", "open('kept.bin', 'wb').write(bytes(range(256)))"));
    String runId = run.path("run_id").asText();
    ServerProcess.Result ok = ServerProcess.runIn(elsewhere, dataDir, null, "runs", "verify");
    assertThat(ok.exit()).as(ok.stdout() + ok.stderr()).isZero();
    assertThat(ok.stdout()).startsWith("OK:").contains("chain head");

    String sha = run.path("artifacts").get(0).path("sha256").asText();
    Path kept = dataDir.resolve("blobs").resolve(sha.substring(0, 2)).resolve(sha);
    byte[] data = Files.readAllBytes(kept);
    data[7] ^= 0x20;
    Files.write(kept, data);
    ServerProcess.Result changed =
        ServerProcess.runIn(elsewhere, dataDir, null, "runs", "verify", "--json");
    assertThat(changed.exit()).isEqualTo(1);
    JsonNode report = JSON.readTree(changed.stdout());
    List<String> problems = new ArrayList<>();
    report
        .path("problems")
        .forEach(p -> problems.add(p.path("run_id").asText() + ":" + p.path("kind").asText()));
    assertThat(problems).contains(runId + ":file_changed");
    data[7] ^= 0x20;
    Files.write(kept, data);

    ServerProcess.Result open =
        ServerProcess.runIn(elsewhere, dataDir, null, "runs", "open", runId);
    assertThat(open.exit()).isZero();
    // The command that opens it, or (neither marimo nor jupyter installed) the notebook's path.
    assertThat(open.stdout())
        .contains(runId)
        .containsPattern("^((marimo edit|jupyter notebook) )?/.*notebook\\.(py|ipynb)\\n$");
  }
}

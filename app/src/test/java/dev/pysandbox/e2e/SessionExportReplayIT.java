package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session's exported notebook re-runs: a session made over the real server with the SDK's MCP
 * client (set_context, upload_file, download_file, clear_context and runs that use them), exported
 * as ipynb and marimo, then executed by the system's Python in a directory holding the files the
 * session was given, reproduces every run's output; where a file is missing or changed it stops
 * saying which. Values a caller set (with code in them) stay data.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Client
class SessionExportReplayIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String CSV = "a,b\n1,2\n";
  private static final String RATES = "{\"eur\": 2}";

  /** Each would create a file named pwned-* if it ran as code anywhere. */
  private static final String LABEL = "\"); open('pwned-1', 'w') #";

  private static final String NESTED = "'''\nopen('pwned-2', 'w')\n'''\\\u2028#";

  @TempDir Path dataDir;
  @TempDir Path replay;
  @TempDir Path empty;

  @Test
  void anExportedSession_reRunsWhereItsFilesAre_reproducingItsOutputs_andStopsWhereTheyAreNot()
      throws Exception {
    HttpServer origin = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    origin.createContext(
        "/",
        exchange -> {
          byte[] body = RATES.getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    origin.start();
    int port = origin.getAddress().getPort();
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args(
                "serve",
                "--data-dir",
                dataDir.toString(),
                "--set",
                "network_allow_private=true",
                "--set",
                "network_allow=127.0.0.1:" + port)
            .build();
    McpSyncClient client =
        McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
            .requestTimeout(Duration.ofSeconds(90))
            .build();
    List<String> stdouts = new ArrayList<>();
    String ipynb;
    String marimo;
    try {
      client.initialize();
      Map<String, Object> values = new LinkedHashMap<>();
      values.put("base", 40);
      values.put("label", LABEL);
      values.put("nested", Map.of("k", List.of("a", NESTED)));
      ok(client, "create_session", Map.of("session_id", "nb"));
      ok(client, "set_context", Map.of("session_id", "nb", "values", values));
      ok(client, "upload_file", Map.of("session_id", "nb", "filename", "data.csv", "content", CSV));
      JsonNode refused =
          call(
              client,
              "upload_file",
              Map.of("session_id", "nb", "filename", "x'); open('pwned-3','w') #", "content", "x"));
      assertThat(refused.path("error").path("code").asText())
          .as("a filename is a plain name or nothing")
          .isEqualTo("invalid_argument");
      stdouts.add(
          run(
              client,
              "import csv\nrows = list(csv.reader(open('data.csv')))\n"
                  + "print(base + int(rows[1][1]), label[-6:], len(label), len(nested['k'][1]))"));
      ok(
          client,
          "download_file",
          Map.of(
              "session_id",
              "nb",
              "url",
              "http://127.0.0.1:" + port + "/rates.json?x=');open('pwned-4','w');('",
              "filename",
              "rates.json"));
      stdouts.add(run(client, "import json\nprint(base * json.load(open('rates.json'))['eur'])"));
      ok(client, "clear_context", Map.of("session_id", "nb"));
      stdouts.add(run(client, "print('base' in globals(), 'csv' in globals())"));
      ok(client, "set_context", Map.of("session_id", "nb", "values", Map.of("base", 1)));
      stdouts.add(run(client, "print(base + 1)"));
      assertThat(stdouts)
          .containsExactly(
              "42 'w') # " + LABEL.length() + " " + NESTED.length() + "\n",
              "80\n",
              "False False\n",
              "2\n");
      ipynb = export(client, "ipynb");
      marimo = export(client, "marimo");
    } finally {
      client.closeGracefully();
      origin.stop(0);
    }

    Files.writeString(replay.resolve("data.csv"), CSV);
    Files.writeString(replay.resolve("rates.json"), RATES);
    Files.writeString(replay.resolve("notebook.ipynb"), ipynb);
    Files.writeString(replay.resolve("notebook.py"), marimo);

    Python py = python(replay, "-I", "notebook.py");
    assertThat(py.exit()).as(py.stderr()).isZero();
    assertThat(py.stdout()).isEqualTo(String.join("", stdouts));

    JsonNode cells = replayIpynb(replay);
    List<String> replayed = new ArrayList<>();
    for (JsonNode c : cells) {
      assertThat(c.has("error")).as(c.toString()).isFalse();
      assertThat(c.path("stdout").asText())
          .as(c.path("id").asText())
          .isEqualTo(c.path("recorded").asText());
      if (!c.path("recorded").asText().isEmpty()) {
        replayed.add(c.path("stdout").asText());
      }
    }
    assertThat(replayed).containsExactlyElementsOf(stdouts);
    assertNoPwned(replay);

    // Where the files are not: the marimo file stops at the check, naming the file and its hash.
    Files.writeString(empty.resolve("notebook.py"), marimo);
    Python missing = python(empty, "-I", "notebook.py");
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.stderr())
        .contains(
            "FileNotFoundError: pysandbox: data.csv is missing: run this notebook in a directory"
                + " that holds the files the session was given (this one: 8 bytes, sha256 ");
    Files.writeString(empty.resolve("data.csv"), "a,b\n1,3\n");
    Files.writeString(empty.resolve("notebook.ipynb"), ipynb);
    JsonNode changed = replayIpynb(empty);
    assertThat(changed.get(changed.size() - 1).path("error").asText())
        .startsWith("ValueError: pysandbox: data.csv is not the file the session was given:");
    assertNoPwned(empty);
  }

  private static void assertNoPwned(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("pwned"));
    }
  }

  /**
   * Executes the notebook's code cells in order in one namespace, as a kernel would, with the
   * system's Python and nbformat: each cell's stdout beside the stdout the notebook recorded, up to
   * the first cell that raises.
   */
  private static JsonNode replayIpynb(Path dir) throws Exception {
    String driver =
        "import contextlib, io, json, sys, nbformat\n"
            + "nb = nbformat.read('notebook.ipynb', as_version=4)\n"
            + "nbformat.validate(nb)\n"
            + "ns = {'__name__': '__main__'}\n"
            + "report = []\n"
            + "for cell in nb.cells:\n"
            + "    if cell.cell_type != 'code':\n"
            + "        continue\n"
            + "    out = io.StringIO()\n"
            + "    recorded = ''.join(o.get('text', '') for o in cell.outputs\n"
            + "                       if o.get('output_type') == 'stream' and o.get('name') == 'stdout')\n"
            + "    try:\n"
            + "        with contextlib.redirect_stdout(out):\n"
            + "            exec(compile(cell.source, cell.id, 'exec'), ns)\n"
            + "    except Exception as e:\n"
            + "        report.append({'id': cell.id, 'error': type(e).__name__ + ': ' + str(e)})\n"
            + "        break\n"
            + "    report.append({'id': cell.id, 'stdout': out.getvalue(), 'recorded': recorded})\n"
            + "print(json.dumps(report))\n";
    Files.writeString(dir.resolve("replay.py"), driver);
    Python r = python(dir, "-I", "replay.py");
    assertThat(r.exit()).as(r.stderr()).isZero();
    return JSON.readTree(r.stdout());
  }

  record Python(int exit, String stdout, String stderr) {}

  private static Python python(Path dir, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("/usr/bin/python3"));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile("replay-out", ".txt");
    Path err = Files.createTempFile("replay-err", ".txt");
    try {
      Process p =
          new ProcessBuilder(cmd)
              .directory(dir.toFile())
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("python finished").isTrue();
      return new Python(p.exitValue(), Files.readString(out), Files.readString(err));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  private static String export(McpSyncClient client, String format) {
    JsonNode e = ok(client, "export_session", Map.of("session_id", "nb", "format", format));
    assertThat(e.path("content").isTextual()).as(e.toString()).isTrue();
    return e.path("content").asText();
  }

  private static String run(McpSyncClient client, String code) {
    JsonNode r = ok(client, "run_python", Map.of("session_id", "nb", "code", code));
    assertThat(r.path("status").asText()).as(r.toString()).isEqualTo("succeeded");
    return r.path("stdout").asText();
  }

  private static JsonNode ok(McpSyncClient client, String tool, Map<String, Object> args) {
    CallToolResult r = client.callTool(CallToolRequest.builder(tool).arguments(args).build());
    assertThat(r.isError()).as("%s: %s", tool, r).isFalse();
    return JSON.valueToTree(r.structuredContent());
  }

  private static JsonNode call(McpSyncClient client, String tool, Map<String, Object> args) {
    CallToolResult r = client.callTool(CallToolRequest.builder(tool).arguments(args).build());
    return JSON.valueToTree(r.structuredContent());
  }
}

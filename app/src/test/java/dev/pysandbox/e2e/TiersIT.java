package dev.pysandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Await;
import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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

/**
 * Tiers through the real server (bin/pysandbox serve) and the MCP SDK's client over stdio: a
 * session made with a tier keeps it, its code is refused a denied import with the exact message,
 * the server records the denial, and the tier's host directory is there, read-only.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Client
class TiersIT {
  @TempDir static Path dataDir;
  @TempDir static Path hostDir;
  static McpSyncClient client;
  static final List<String> serverStderr = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void connect() throws Exception {
    Files.setPosixFilePermissions(hostDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.writeString(hostDir.resolve("notes.txt"), "from the host\n");
    Files.setPosixFilePermissions(
        hostDir.resolve("notes.txt"), PosixFilePermissions.fromString("rw-r--r--"));
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args(
                "serve",
                "--data-dir",
                dataDir.toString(),
                "--set",
                "fs_mounts=notes=" + hostDir,
                "--set",
                "pool_size=1")
            .build();
    StdioClientTransport transport = new StdioClientTransport(params, McpJsonDefaults.getMapper());
    transport.setStdErrorHandler(serverStderr::add);
    client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(90)).build();
    client.initialize();
  }

  @AfterAll
  static void disconnect() {
    if (client != null) {
      client.closeGracefully();
    }
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
    assertThat(r.isError()).as(String.valueOf(r.structuredContent())).isTrue();
    return (Map<String, Object>) json(r).get("error");
  }

  @Test
  @SuppressWarnings("unchecked")
  void sessionWithATier_deniesTheImport_keepsItsTier_andSeesItsHostDirectoryReadOnly()
      throws Exception {
    CallToolResult made = call("create_session", Map.of("session_id", "fs1", "tier", "filesystem"));
    assertThat(made.isError()).as(String.valueOf(made.structuredContent())).isFalse();
    assertThat(json(made)).containsEntry("tier", "filesystem");

    CallToolResult denied =
        call("run_python", Map.of("session_id", "fs1", "code", "import socket"));
    assertThat(denied.isError()).isFalse();
    Map<String, Object> run = json(denied);
    assertThat(run).containsEntry("status", "failed").containsEntry("tier", "filesystem");
    Map<String, Object> error = (Map<String, Object>) run.get("error");
    assertThat(error)
        .containsEntry("name", "ImportError")
        .containsEntry("value", "import of 'socket' is not allowed in tier 'filesystem'");

    CallToolResult read =
        call(
            "run_python",
            Map.of(
                "session_id",
                "fs1",
                "code",
                "import os\nprint(open('/mnt/host/notes/notes.txt').read(), end='')\n"
                    + "try:\n    open('/mnt/host/notes/x', 'w')\nexcept OSError as e:\n"
                    + "    print(e.errno)"));
    assertThat(json(read)).containsEntry("stdout", "from the host\n30\n");
    assertThat(hostDir.resolve("x")).doesNotExist();

    Map<String, Object> other =
        errorOf(call("run_python", Map.of("session_id", "fs1", "code", "1", "tier", "basic")));
    assertThat(other).containsEntry("code", "invalid_argument");
    assertThat((String) other.get("message")).contains("the session's tier is filesystem");

    Map<String, Object> sessions = json(call("list_sessions", Map.of()));
    assertThat(sessions.get("sessions").toString()).contains("tier=filesystem");

    // The server recorded the denial (the placeholder security event log writes it to stderr).
    String runId = (String) run.get("run_id");
    Await.until(
        "the server's stderr names " + runId,
        () -> serverStderr.stream().anyMatch(l -> l.contains(runId)),
        seen -> seen);
    assertThat(serverStderr)
        .anySatisfy(
            l ->
                assertThat(l)
                    .contains("import_denied")
                    .contains(runId)
                    .contains("module=socket")
                    .contains("tier=filesystem"));
    call("close_session", Map.of("session_id", "fs1"));
  }

  @Test
  void tiersThatCannotBeHad_areToolErrorsWithTheirCodes_andCheckSetupListsTheTiers() {
    assertThat(errorOf(call("run_python", Map.of("code", "1", "tier", "network"))))
        .containsEntry("code", "forbidden");
    assertThat(errorOf(call("create_session", Map.of("tier", "gpu"))))
        .containsEntry("code", "invalid_argument");
    Map<String, Object> setup = json(call("check_setup", Map.of()));
    assertThat(setup.get("tiers").toString())
        .contains("default=basic")
        .contains("allowed=[basic, data_science, filesystem]")
        .contains("/mnt/host/notes");
  }
}

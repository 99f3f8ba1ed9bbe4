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
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * validate_code and run_python(dry_run=true) as an MCP client meets them: the real server over
 * stdio (the MCP SDK's client, which checks results against each tool's output schema), a disguised
 * call found, a syntax error located, and a dry run that leaves no run behind.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Client
class CodeAnalysisIT {
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dataDir;
  static McpSyncClient client;

  @BeforeAll
  static void connect() {
    ServerParameters params =
        ServerParameters.builder(TestServices.launcher().toString())
            .args("serve", "--data-dir", dataDir.toString())
            .build();
    client =
        McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
            .requestTimeout(Duration.ofSeconds(60))
            .build();
    client.initialize();
  }

  @AfterAll
  static void disconnect() {
    if (client != null) {
      client.closeGracefully();
    }
  }

  static CallToolResult call(String tool, Map<String, Object> args) {
    CallToolResult r = client.callTool(CallToolRequest.builder(tool).arguments(args).build());
    assertThat(r.isError()).as("%s: %s", tool, r.structuredContent()).isFalse();
    return r;
  }

  static String text(CallToolResult r) {
    return ((McpSchema.TextContent) r.content().get(0)).text();
  }

  @Test
  void validateCode_isAReadOnlyTool_thatFindsADisguisedShellCall() {
    McpSchema.Tool tool =
        client.listTools().tools().stream()
            .filter(t -> t.name().equals("validate_code"))
            .findFirst()
            .orElseThrow();
    assertThat(tool.annotations().readOnlyHint()).isTrue();

    CallToolResult r =
        call("validate_code", Map.of("code", "import os\nf = getattr(os, 'sys' + 'tem')\nf('id')"));
    JsonNode report = JSON.valueToTree(r.structuredContent());

    assertThat(report.path("valid").asBoolean()).isTrue();
    assertThat(report.path("max_severity").asText()).isEqualTo("critical");
    assertThat(report.path("lines").asInt()).isEqualTo(3);
    assertThat(report.path("imports").asInt()).isEqualTo(1);
    assertThat(report.path("analysis_ms").asDouble()).isPositive();
    // Most severe first, then by line: where os.system is fetched, then where it is called.
    JsonNode fetched = report.path("risk_findings").get(0);
    assertThat(fetched.path("rule").asText()).isEqualTo("process_execution");
    assertThat(fetched.path("line").asInt()).isEqualTo(2);
    assertThat(fetched.path("column").asInt()).isEqualTo(5);
    assertThat(fetched.path("snippet").asText()).isEqualTo("f = getattr(os, 'sys' + 'tem')");
    JsonNode called = report.path("risk_findings").get(1);
    assertThat(called.path("severity").asText()).isEqualTo("critical");
    assertThat(called.path("line").asInt()).isEqualTo(3);
    assertThat(called.path("snippet").asText()).isEqualTo("f('id')");
    assertThat(report.path("risk_findings").findValuesAsText("rule")).contains("dynamic_attribute");
    assertThat(text(r))
        .startsWith("valid; ")
        .contains("critical process_execution line 3, column 1: ");
  }

  @Test
  void validateCode_ofTopLevelReturn_saysWhereAndWhy() {
    CallToolResult r = call("validate_code", Map.of("code", "x = 1\nreturn x"));
    JsonNode report = JSON.valueToTree(r.structuredContent());

    assertThat(report.path("valid").asBoolean()).isFalse();
    assertThat(report.at("/syntax_errors/0/line").asInt()).isEqualTo(2);
    assertThat(report.at("/syntax_errors/0/column").asInt()).isEqualTo(1);
    assertThat(report.at("/syntax_errors/0/message").asText())
        .isEqualTo("'return' outside function");
    assertThat(text(r)).startsWith("not valid: line 2, column 1: 'return' outside function");
  }

  @Test
  void runPython_dryRun_answersTheAnalysisAsARun_andRecordsNothing() {
    CallToolResult r =
        call(
            "run_python",
            Map.of(
                "code",
                "import subprocess as sp\nsp.run('ls', shell=True)\nprint('never')",
                "dry_run",
                true));
    JsonNode run = JSON.valueToTree(r.structuredContent());

    assertThat(run.path("status").asText()).isEqualTo("dry_run");
    assertThat(run.path("run_id").isNull()).isTrue();
    assertThat(run.path("stdout").isNull()).isTrue();
    assertThat(run.path("message").asText())
        .isEqualTo("dry run: valid, 2 findings (highest: critical); nothing ran");
    assertThat(run.at("/risk_findings/0/rule").asText()).isEqualTo("process_execution");
    assertThat(run.at("/risk_findings/0/severity").asText()).isEqualTo("critical");
    assertThat(text(r)).startsWith("dry run: nothing ran\n").contains("--- risk findings ---");

    JsonNode runs = JSON.valueToTree(call("list_runs", Map.of()).structuredContent());
    assertThat(runs.path("total").asInt()).isZero();
  }
}

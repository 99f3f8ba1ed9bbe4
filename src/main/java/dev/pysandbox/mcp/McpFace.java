package dev.pysandbox.mcp;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.api.Version;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MCP face: the tools of ARCHITECTURE.md's contract, each a thin mapping from arguments to a
 * core call and from its result (or error) to a tool result. Nothing here decides anything.
 */
public final class McpFace {
  private static final Logger log = LoggerFactory.getLogger(McpFace.class);

  static final String INSTRUCTIONS =
      "pysandbox runs Python in an isolated sandbox (no network, no host files) and records"
          + " every run. Use run_python to execute code: the value of a trailing expression is"
          + " returned as the result, print() output as stdout, exceptions with a traceback."
          + " The working directory is /mnt/data; numpy, pandas and matplotlib are available."
          + " list_runs and get_run show the history; check_setup shows what is installed.";

  private final SandboxService service;

  public McpFace(SandboxService service) {
    this.service = service;
  }

  /**
   * Serves MCP over stdio until the client closes stdin.
   *
   * @param out the real standard output; nothing else may write to it
   */
  public McpSyncServer serveStdio(InputStream in, OutputStream out) {
    McpJsonMapper mapper = McpJsonDefaults.getMapper();
    StdioServerTransportProvider transport = new StdioServerTransportProvider(mapper, in, out);
    return McpServer.sync(transport)
        .serverInfo("pysandbox", Version.VALUE)
        .instructions(INSTRUCTIONS)
        .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
        .validateToolInputs(false)
        .jsonSchemaValidator(new LazySchemaValidator())
        .tools(tools(mapper))
        .build();
  }

  List<SyncToolSpecification> tools(McpJsonMapper mapper) {
    return List.of(
        tool(
            mapper,
            "run_python",
            "Run Python code",
            "Run Python code in a fresh, isolated sandbox and return stdout, stderr, the value of"
                + " the trailing expression, errors with a traceback, display outputs and the files"
                + " written to /mnt/data. Every run is recorded.",
            Schemas.RUN_PYTHON,
            annotations("Run Python code", false, false, false),
            Set.of("code", "session_id", "description", "timeout_seconds"),
            a -> {
              RunRecord r =
                  service.run(
                      new ExecutionRequest(
                          a.requiredString("code"),
                          a.string("session_id"),
                          a.string("description"),
                          a.integer("timeout_seconds")));
              return ToolResults.run(r);
            }),
        tool(
            mapper,
            "list_runs",
            "List runs",
            "List recorded runs, newest first, with status, timing and a preview of the code.",
            Schemas.LIST_RUNS,
            annotations("List runs", true, false, true),
            Set.of("limit", "offset", "status", "session_id"),
            a -> {
              String status = a.string("status");
              RunPage page =
                  service.listRuns(
                      new RunQuery(
                          a.integer("limit", 20),
                          a.integer("offset", 0),
                          status == null ? null : RunStatus.fromWire(status),
                          a.string("session_id")));
              StringBuilder text = new StringBuilder();
              text.append(page.runs().size()).append(" of ").append(page.total()).append(" runs\n");
              page.runs()
                  .forEach(
                      r ->
                          text.append(r.runId())
                              .append("  ")
                              .append(r.status())
                              .append("  ")
                              .append(r.createdAt())
                              .append("  ")
                              .append(r.codePreview())
                              .append('\n'));
              return ToolResults.ok(page, text.toString());
            }),
        tool(
            mapper,
            "get_run",
            "Get a run",
            "Get one recorded run by id: code, status, outputs, error, result, files, timings.",
            Schemas.GET_RUN,
            annotations("Get a run", true, false, true),
            Set.of("run_id", "include_code", "include_notebook_source"),
            a -> {
              if (a.bool("include_notebook_source", false)) {
                throw new PysandboxException(
                    ErrorCode.INVALID_ARGUMENT,
                    "get_run: include_notebook_source is not available: this server does not save"
                        + " notebooks yet");
              }
              RunRecord r =
                  service.getRun(a.requiredString("run_id"), a.bool("include_code", true));
              return ToolResults.run(r);
            }),
        tool(
            mapper,
            "check_setup",
            "Check the setup",
            "Report the sandbox backend, the Python interpreter and its packages, the limits in"
                + " force, the data directory, and what is missing with how to install it.",
            Schemas.NO_ARGS,
            annotations("Check the setup", true, false, true),
            Set.of(),
            a -> {
              SetupReport r = service.checkSetup();
              String text =
                  (r.ready() ? "ready" : "NOT ready")
                      + "; backend "
                      + r.backends().get(0).name()
                      + ", python "
                      + r.interpreter().getOrDefault("version", "?")
                      + (r.problems().isEmpty()
                          ? ""
                          : "\nproblems:\n- " + String.join("\n- ", r.problems()));
              return ToolResults.ok(r, text);
            }));
  }

  private static McpSchema.ToolAnnotations annotations(
      String title, boolean readOnly, boolean destructive, boolean idempotent) {
    return McpSchema.ToolAnnotations.builder()
        .title(title)
        .readOnlyHint(readOnly)
        .destructiveHint(destructive)
        .idempotentHint(idempotent)
        .openWorldHint(false)
        .build();
  }

  private SyncToolSpecification tool(
      McpJsonMapper mapper,
      String name,
      String title,
      String description,
      String schema,
      McpSchema.ToolAnnotations annotations,
      Set<String> known,
      Function<ToolArgs, McpSchema.CallToolResult> handler) {
    McpSchema.Tool tool =
        McpSchema.Tool.builder(name, mapper, schema)
            .title(title)
            .description(description)
            .annotations(annotations)
            .build();
    return SyncToolSpecification.builder()
        .tool(tool)
        .callHandler(
            (exchange, request) -> {
              try {
                return handler.apply(new ToolArgs(name, request.arguments(), known));
              } catch (PysandboxException e) {
                return ToolResults.error(e);
              } catch (RuntimeException e) {
                log.error("tool {} failed", name, e);
                return ToolResults.error(ErrorCode.INTERNAL, name + " failed: " + e);
              }
            })
        .build();
  }
}

package dev.pysandbox.mcp;

import dev.pysandbox.api.CancelResult;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunOutputs;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.SetupReport;
import dev.pysandbox.api.Version;
import dev.pysandbox.mcp.ToolFactory.Kind;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The MCP face: the tools of the ARCHITECTURE.md contract, each a thin mapping from arguments to a
 * core call and from its result (or error) to a tool result. Nothing here decides anything.
 */
public final class McpFace {
  static final String INSTRUCTIONS =
      "pysandbox runs Python in an isolated sandbox (no network, no host files) and records"
          + " every run. run_python executes code: the value of a trailing expression is"
          + " returned as the result, print() output as stdout, exceptions with a traceback,"
          + " matplotlib figures as images. Without session_id each call gets a fresh sandbox;"
          + " with a session_id (create_session, or just name one) variables and files in"
          + " /mnt/data persist between calls. numpy, pandas and matplotlib are available;"
          + " there is no network. upload_file puts data in, read_artifact gets files out.";

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
    ToolFactory f = new ToolFactory(mapper);
    List<SyncToolSpecification> all = new ArrayList<>(runTools(f));
    all.addAll(SessionTools.specs(f, service));
    all.addAll(FileTools.specs(f, service));
    return all;
  }

  private List<SyncToolSpecification> runTools(ToolFactory f) {
    return List.of(
        f.tool(
            "run_python",
            "Run Python code",
            "Run Python code in an isolated sandbox and return stdout, stderr, the value of the"
                + " trailing expression, errors with a traceback, display outputs (charts as"
                + " images) and the files written to /mnt/data. Give session_id to keep variables"
                + " and files between calls; omit it for a fresh sandbox. Every run is recorded.",
            Schemas.RUN_PYTHON,
            Kind.WRITE,
            Set.of("code", "session_id", "description", "timeout_seconds"),
            a ->
                ToolResults.run(
                    service.run(
                        new ExecutionRequest(
                            a.requiredString("code"),
                            a.string("session_id"),
                            a.string("description"),
                            a.integer("timeout_seconds"))))),
        f.tool(
            "cancel_run",
            "Cancel a run",
            "Stop a running run: KeyboardInterrupt first (a session keeps its state); if it has"
                + " not stopped after the grace period its sandbox is killed (a session is then"
                + " dead).",
            Schemas.RUN_ID_ONLY,
            Kind.DESTRUCTIVE,
            Set.of("run_id"),
            a -> {
              CancelResult r = service.cancelRun(a.requiredString("run_id"));
              return ToolResults.ok(r, r.runId() + ": " + r.status() + " — " + r.message());
            }),
        f.tool(
            "list_runs",
            "List runs",
            "List recorded runs, newest first, with status, timing and a preview of the code.",
            Schemas.LIST_RUNS,
            Kind.READ,
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
        f.tool(
            "get_run",
            "Get a run",
            "Get one recorded run by id: code, status, outputs, error, result, files, timings.",
            Schemas.GET_RUN,
            Kind.READ,
            Set.of("run_id", "include_code", "include_notebook_source"),
            a -> {
              if (a.bool("include_notebook_source", false)) {
                throw new PysandboxException(
                    ErrorCode.INVALID_ARGUMENT,
                    "get_run: include_notebook_source is not available: this server does not save"
                        + " notebooks yet");
              }
              return ToolResults.run(
                  service.getRun(a.requiredString("run_id"), a.bool("include_code", true)));
            }),
        f.tool(
            "get_run_outputs",
            "Get a run's outputs",
            "Get the __outputs__ dict a run filled (values that are not JSON come as repr).",
            Schemas.RUN_ID_ONLY,
            Kind.READ,
            Set.of("run_id"),
            a -> {
              RunOutputs o = service.getRunOutputs(a.requiredString("run_id"));
              return ToolResults.ok(o, Json.write(o.outputs()));
            }),
        f.tool(
            "check_setup",
            "Check the setup",
            "Report the sandbox backend, the Python interpreter and its packages, the limits in"
                + " force, the data directory, and what is missing with how to install it.",
            Schemas.NO_ARGS,
            Kind.READ,
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
}

package dev.pysandbox.mcp;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.Tenants;
import dev.pysandbox.api.Version;
import dev.pysandbox.api.op.Operations;
import dev.pysandbox.util.DaemonThreads;
import dev.pysandbox.util.TimeSource;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.McpTransportContextExtractor;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.http.HttpServletRequest;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MCP face: the tools of the ARCHITECTURE.md contract, each a thin mapping from arguments to a
 * core call and from its result (or error) to a tool result. Nothing here decides anything.
 */
public final class McpFace {
  private static final Logger log = LoggerFactory.getLogger(McpFace.class);
  static final String INSTRUCTIONS =
      "pysandbox runs Python in an isolated sandbox (no network, no host files) and records"
          + " every run. run_python executes code: the value of a trailing expression is"
          + " returned as the result, print() output as stdout, exceptions with a traceback,"
          + " matplotlib figures as images. Without session_id each call gets a fresh sandbox;"
          + " with a session_id (create_session, or just name one) variables and files in"
          + " /mnt/data persist between calls. numpy, pandas, matplotlib, seaborn, scikit-learn,"
          + " statsmodels, openpyxl, plotly and reportlab are available;"
          + " there is no network. upload_file puts data in, read_artifact gets files out.";

  /** Tool calls handled at once; more wait in a queue (a run blocks its thread while it runs). */
  static final int MAX_CONCURRENT_CALLS = 256;

  /** Calls waiting for a thread; past this a call is answered "server busy". */
  static final int MAX_QUEUED_CALLS = 10_000;

  /**
   * The transport-context key under which a transport that authenticates its clients (HTTP) puts
   * the caller's tenant.
   */
  public static final String TENANT_KEY = "pysandbox.tenant";

  /**
   * The transport-context key under which the HTTP transport puts the request's id (its {@code
   * X-Request-Id}).
   */
  public static final String REQUEST_ID_KEY = "pysandbox.request_id";

  private final LoggingAsked logging = new LoggingAsked();
  private final Function<McpTransportContext, SandboxService> services;
  private final int resultOutputLimit;
  private final Choices choices;

  /**
   * The server's choices for its face: approve_run and deny_run offered, HTTP elicitation prompts
   * deciding held runs, the tools offered (null: every tool).
   */
  private record Choices(
      boolean agentMayApprove, boolean httpElicitationApproves, Set<String> enabled) {}

  /**
   * One service for every call: the stdio face, whose one client acts as the tenant {@code local}.
   *
   * @param resultOutputLimit bytes of stdout and of stderr a run_python result carries
   */
  public McpFace(SandboxService service, int resultOutputLimit) {
    this(context -> service, resultOutputLimit);
  }

  /**
   * The service each call acts on is the view of the tenant its transport put under {@link
   * #TENANT_KEY}; a call without one is refused (a transport that forgot to authenticate fails
   * closed).
   */
  public static McpFace forTenants(Tenants tenants, int resultOutputLimit) {
    return new McpFace(
        context -> {
          if (!(context.get(TENANT_KEY) instanceof String tenant)) {
            throw new PysandboxException(
                ErrorCode.INTERNAL, "the call came without a tenant (the transport did not say)");
          }
          return tenants.forTenant(tenant);
        },
        resultOutputLimit);
  }

  private McpFace(Function<McpTransportContext, SandboxService> services, int resultOutputLimit) {
    this(services, resultOutputLimit, new Choices(false, false, null));
  }

  private McpFace(
      Function<McpTransportContext, SandboxService> services,
      int resultOutputLimit,
      Choices choices) {
    this.services = services;
    this.resultOutputLimit = resultOutputLimit;
    this.choices = choices;
  }

  /**
   * This face, with the tools approve_run and deny_run when {@code allow} (the server's {@code
   * agent_may_approve}: the agent then decides its own runs, which is weaker).
   */
  public McpFace agentApprovals(boolean allow) {
    return new McpFace(
        services,
        resultOutputLimit,
        new Choices(allow, choices.httpElicitationApproves(), choices.enabled()));
  }

  /**
   * This face, letting clients over HTTP decide held runs at their elicitation prompt when {@code
   * allow} (the server's {@code http_elicitation_approves}, off by default: nothing proves that a
   * person, not the agent's own client, answered). Over stdio the local client always may.
   */
  public McpFace httpElicitationApproves(boolean allow) {
    return new McpFace(
        services,
        resultOutputLimit,
        new Choices(choices.agentMayApprove(), allow, choices.enabled()));
  }

  /**
   * This face, offering only the tools named (the server's {@code tools_enabled}, resolved by
   * {@link dev.pysandbox.api.op.ToolGroups}); the others are unknown tools on both transports.
   */
  public McpFace toolsEnabled(Set<String> names) {
    return new McpFace(
        services,
        resultOutputLimit,
        new Choices(
            choices.agentMayApprove(), choices.httpElicitationApproves(), Set.copyOf(names)));
  }

  /**
   * The largest MCP message accepted: an upload of {@code uploadMaxBytes} as base64, plus 1 MiB for
   * the rest of the message.
   */
  public static int maxMessageBytes(long uploadMaxBytes) {
    long base64 = (uploadMaxBytes + 2) / 3 * 4;
    return (int) Math.min(Integer.MAX_VALUE - 1024, base64 + (1 << 20));
  }

  /**
   * Serves MCP over stdio, from now until the client closes stdin (see {@link
   * StdioConnection#closed()}).
   *
   * @param out the real standard output; nothing else may write to it
   * @param maxMessageBytes a longer message is refused with an error (see {@link #maxMessageBytes})
   */
  public StdioConnection serveStdio(InputStream in, OutputStream out, int maxMessageBytes) {
    ObjectMapper json = InboundMessages.mapper(maxMessageBytes);
    McpJsonMapper mapper = new JacksonMcpJsonMapper(json);
    List<SyncToolSpecification> tools = tools(CallRecord.Face.MCP_STDIO);
    Set<String> names = new HashSet<>();
    tools.forEach(t -> names.add(t.tool().name()));
    ThreadPoolExecutor calls =
        new ThreadPoolExecutor(
            MAX_CONCURRENT_CALLS,
            MAX_CONCURRENT_CALLS,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(MAX_QUEUED_CALLS),
            DaemonThreads.numbered("pysandbox-call-"));
    calls.allowCoreThreadTimeOut(true);
    StdioTransport transport =
        new StdioTransport(
            json, mapper, new InboundMessages(json, () -> names), in, out, maxMessageBytes, calls);
    transport.recordLoggingIn(logging);
    RunSubscriptions subscriptions = new RunSubscriptions(transport);
    transport.answerResourcesWith(new ResourceMethods(services, subscriptions));
    return new StdioConnection(
        transport, server(McpServer.sync(transport), mapper, tools), calls, subscriptions);
  }

  /**
   * Serves MCP over Streamable HTTP (protocol versions 2025-03-26 to 2025-11-25) with the same
   * tools as {@link #serveStdio}: a servlet ({@link McpHttpFront}) with resumable streams ({@link
   * StreamableHttpTransport}), to be mounted at {@code /mcp} by a container that has authenticated
   * the request before it reaches the servlet.
   *
   * @param context what each request's transport context holds; the tenant under {@link
   *     #TENANT_KEY} when this face was made by {@link #forTenants}
   * @param maxMessageBytes a longer request body is refused with 413 (see {@link #maxMessageBytes})
   */
  public McpHttpEndpoint serveHttp(
      McpTransportContextExtractor<HttpServletRequest> context, int maxMessageBytes) {
    ObjectMapper json = InboundMessages.mapper(maxMessageBytes);
    json.registerModule(McpErrorSerializer.module());
    json.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    McpJsonMapper mapper = new JacksonMcpJsonMapper(json);
    StreamableHttpTransport transport =
        new StreamableHttpTransport(json, mapper, TimeSource.system());
    List<SyncToolSpecification> tools = tools(CallRecord.Face.MCP_HTTP);
    Set<String> names = new HashSet<>();
    tools.forEach(t -> names.add(t.tool().name()));
    RunSubscriptions subscriptions = new RunSubscriptions(transport);
    ResourceMethods methods = new ResourceMethods(services, subscriptions);
    transport.onSessionEnd(
        id -> {
          methods.sessionClosed(id);
          logging.forget(id);
        });
    ExecutorService cancels =
        Executors.newCachedThreadPool(DaemonThreads.numbered("pysandbox-mcp-cancel-"));
    McpHttpFront front =
        new McpHttpFront(
            transport,
            json,
            mapper,
            new InboundMessages(json, () -> names),
            context,
            methods,
            logging,
            cancels,
            maxMessageBytes);
    return new McpHttpEndpoint(
        front, server(McpServer.sync(transport), mapper, tools), subscriptions, cancels);
  }

  /**
   * The one definition of this server, whatever carries it: name, instructions, capabilities,
   * tools, resource templates, prompts and validation. Handlers run on the thread that delivers the
   * call ({@code immediateExecution}): the stdio transport's call pool, or the HTTP request's
   * thread. {@code resources/list}, {@code resources/subscribe} and {@code resources/unsubscribe}
   * are answered by the transports ({@link ResourceMethods}) before the SDK sees them.
   */
  private McpSyncServer server(
      McpServer.SyncSpecification<?> spec,
      McpJsonMapper mapper,
      List<SyncToolSpecification> tools) {
    return spec.serverInfo("pysandbox", Version.VALUE)
        .instructions(INSTRUCTIONS)
        .jsonMapper(mapper)
        .immediateExecution(true)
        // Server-to-client requests are elicitations: a person deciding an approval takes time.
        .requestTimeout(java.time.Duration.ofMinutes(10))
        .capabilities(
            McpSchema.ServerCapabilities.builder()
                .tools(false)
                .resources(true, false)
                .prompts(false)
                .build())
        .uriTemplateManagerFactory(UriTemplates::new)
        .resourceTemplates(RunResources.specs(services))
        .prompts(Prompts.specs(services))
        .validateToolInputs(false)
        .jsonSchemaValidator(new LazySchemaValidator(tools))
        .tools(tools)
        .build();
  }

  List<SyncToolSpecification> tools(CallRecord.Face face) {
    ToolFactory f =
        new ToolFactory(
            services,
            logging,
            face,
            face == CallRecord.Face.MCP_HTTP ? choices.httpElicitationApproves() : true);
    List<SyncToolSpecification> all = new ArrayList<>(RunTools.specs(f, resultOutputLimit));
    all.addAll(SessionTools.specs(f));
    all.addAll(FileTools.specs(f));
    all.addAll(AgentRunTools.specs(f));
    if (choices.agentMayApprove()) {
      for (var op : Operations.AGENT_APPROVALS) {
        all.add(
            f.tool(
                op,
                (RunRecord r) ->
                    ToolResults.ok(r, r.runId() + ": " + r.status() + " — " + r.message())));
      }
    }
    if (choices.enabled() != null) {
      all.removeIf(t -> !choices.enabled().contains(t.tool().name()));
    }
    return all;
  }
}

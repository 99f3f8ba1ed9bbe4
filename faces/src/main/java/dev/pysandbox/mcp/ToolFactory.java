package dev.pysandbox.mcp;

import dev.pysandbox.api.CallRecord;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.LongCalls;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.InputSchema;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.OperationCalls;
import dev.pysandbox.util.ThreadInterrupter;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Builds one tool from its {@link Operation}: the definition (input schema, output schema,
 * annotations) is derived from the declaration, and the handler parses the arguments against it,
 * maps every failure to the error shape and records the call in the caller's trajectory ({@link
 * SandboxService#recordCall}), in one place. The SDK's own schema validation is off, so that every
 * bad argument gets our {@code invalid_argument} error naming the argument.
 */
final class ToolFactory {
  private static final Logger log = LoggerFactory.getLogger(ToolFactory.class);

  /** What a tool does with its parsed arguments, on the service of the caller's tenant. */
  @FunctionalInterface
  interface Handler {
    /**
     * @param progress what the call hears of a run it starts (cancel, progress notifications)
     */
    McpSchema.CallToolResult handle(
        SandboxService service, Arguments arguments, RunProgress progress);
  }

  private final Function<McpTransportContext, SandboxService> services;
  private final LoggingAsked logging;
  private final CallRecord.Face face;
  private final String elicitationDecider;

  /**
   * @param services the service a call acts on, from its transport context
   * @param face the transport's, for the trajectory
   * @param elicitationDecides whether the client's answer at an approval prompt decides a held run
   */
  ToolFactory(
      Function<McpTransportContext, SandboxService> services,
      LoggingAsked logging,
      CallRecord.Face face,
      boolean elicitationDecides) {
    this.services = services;
    this.logging = logging;
    this.face = face;
    this.elicitationDecider =
        !elicitationDecides
            ? null
            : face == CallRecord.Face.MCP_STDIO
                ? RunProgress.LOCAL_DECIDER
                : RunProgress.CLIENT_ASSERTED_DECIDER;
  }

  /** How a tool shows its operation's result: text for people and models, the JSON alongside. */
  @FunctionalInterface
  interface Presenter<T> {
    McpSchema.CallToolResult present(T result);
  }

  /**
   * The tool of {@code op}: it makes the operation's one call ({@link OperationCalls}) and shows
   * the result. A run it starts is cancelled when the client cancels the call, and reports its
   * progress when the call asked for it ({@link RunProgress}).
   */
  <T> SyncToolSpecification tool(Operation op, Presenter<T> presenter) {
    return tool(
        op,
        (service, args, progress) ->
            presenter.present(OperationCalls.<T>call(op, service, args, progress)));
  }

  SyncToolSpecification tool(Operation op, Handler handler) {
    McpSchema.ToolAnnotations annotations =
        McpSchema.ToolAnnotations.builder()
            .title(op.title())
            .readOnlyHint(op.effect().readOnly())
            .destructiveHint(op.effect().destructive())
            .idempotentHint(op.effect().idempotent())
            .openWorldHint(false)
            .build();
    McpSchema.Tool tool =
        McpSchema.Tool.builder(op.name(), InputSchema.of(op))
            .outputSchema(OutputSchemas.of(op.result()))
            .title(op.title())
            .description(op.description())
            .annotations(annotations)
            .build();
    return SyncToolSpecification.builder()
        .tool(tool)
        .callHandler(
            (exchange, request) -> {
              // The request id and tenant an HTTP transport put in the context reach the logs
              // and the run's record, on whatever thread the call runs.
              long began = System.nanoTime();
              var context = exchange.transportContext();
              Map<String, String> mdcBefore = MDC.getCopyOfContextMap();
              String requestId =
                  context.get(McpFace.REQUEST_ID_KEY) instanceof String id ? id : null;
              if (requestId != null) {
                MDC.put("request_id", requestId);
              }
              if (context.get(McpFace.TENANT_KEY) instanceof String tenant) {
                MDC.put("tenant", tenant);
              }
              SandboxService service = null;
              McpSchema.CallToolResult result = null;
              try {
                CallHandle call =
                    exchange.transportContext().get(CallHandle.CONTEXT_KEY) instanceof CallHandle c
                        ? c
                        : null;
                service = services.apply(exchange.transportContext());
                Arguments args = op.parse(request.arguments());
                // Over HTTP a wait or a download holds a thread: one of the caller's few.
                LongCalls.Slot slot =
                    LongCalls.enter(
                        exchange.transportContext().get(LongCalls.ATTRIBUTE), op.name(), args);
                try (RunProgress progress =
                        new RunProgress(
                            service,
                            call,
                            exchange,
                            request,
                            logging.asked(exchange.sessionId()),
                            elicitationDecider);
                    ThreadInterrupter interrupter = new ThreadInterrupter()) {
                  LongCalls.Kind kind = LongCalls.kindOf(op.name(), args);
                  if (call != null
                      && (kind == LongCalls.Kind.DOWNLOAD || kind == LongCalls.Kind.WAIT)) {
                    call.whenCancelled(interrupter::interrupt); // a cancelled wait or fetch ends
                  }
                  result = handler.handle(service, args, progress);
                } finally {
                  slot.close();
                }
              } catch (PysandboxException e) {
                result = ToolResults.error(e);
              } catch (RuntimeException e) {
                log.error("tool {} failed", op.name(), e);
                result =
                    ToolResults.error(
                        ErrorCode.INTERNAL,
                        op.name()
                            + " failed inside the server (a bug; the server's log has the details)");
              } finally {
                if (service != null) {
                  Map<String, Object> args =
                      request.arguments() == null ? Map.of() : request.arguments();
                  service.recordCall(
                      record(op, args, result, requestId, System.nanoTime() - began));
                }
                if (mdcBefore == null) {
                  MDC.clear();
                } else {
                  MDC.setContextMap(mdcBefore);
                }
              }
              return result;
            })
        .build();
  }

  /** The call for the trajectory: an error result's code, or what the result names. */
  private CallRecord record(
      Operation op,
      Map<String, Object> arguments,
      McpSchema.CallToolResult result,
      String requestId,
      long nanos) {
    Object json = result == null ? null : result.structuredContent();
    if (result == null || Boolean.TRUE.equals(result.isError())) {
      String wire =
          json instanceof Map<?, ?> m
                  && m.get("error") instanceof Map<?, ?> error
                  && error.get("code") instanceof String c
              ? c
              : null;
      ErrorCode code =
          Arrays.stream(ErrorCode.values())
              .filter(c -> c.wireName().equals(wire))
              .findFirst()
              .orElse(ErrorCode.INTERNAL);
      return CallRecord.failed(face, op.name(), arguments, code, requestId, nanos);
    }
    return CallRecord.answered(face, op.name(), arguments, json, requestId, nanos);
  }
}

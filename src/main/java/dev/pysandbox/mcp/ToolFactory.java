package dev.pysandbox.mcp;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds one tool: its definition (schema, annotations) and a handler that checks arguments by name
 * and maps every failure to the error shape, in one place.
 */
final class ToolFactory {
  private static final Logger log = LoggerFactory.getLogger(ToolFactory.class);

  private final McpJsonMapper mapper;

  ToolFactory(McpJsonMapper mapper) {
    this.mapper = mapper;
  }

  /** Hints for clients: whether a tool changes anything, destroys anything, can be repeated. */
  enum Kind {
    READ(true, false, true),
    WRITE(false, false, false),
    IDEMPOTENT_WRITE(false, false, true),
    DESTRUCTIVE(false, true, true);

    final boolean readOnly;
    final boolean destructive;
    final boolean idempotent;

    Kind(boolean readOnly, boolean destructive, boolean idempotent) {
      this.readOnly = readOnly;
      this.destructive = destructive;
      this.idempotent = idempotent;
    }
  }

  SyncToolSpecification tool(
      String name,
      String title,
      String description,
      String schema,
      Class<?> output,
      Kind kind,
      Set<String> arguments,
      Function<ToolArgs, McpSchema.CallToolResult> handler) {
    McpSchema.ToolAnnotations annotations =
        McpSchema.ToolAnnotations.builder()
            .title(title)
            .readOnlyHint(kind.readOnly)
            .destructiveHint(kind.destructive)
            .idempotentHint(kind.idempotent)
            .openWorldHint(false)
            .build();
    McpSchema.Tool tool =
        McpSchema.Tool.builder(name, mapper, schema)
            .outputSchema(OutputSchemas.of(output))
            .title(title)
            .description(description)
            .annotations(annotations)
            .build();
    return SyncToolSpecification.builder()
        .tool(tool)
        .callHandler(
            (exchange, request) -> {
              try {
                CallHandle call =
                    exchange.transportContext().get(CallHandle.CONTEXT_KEY) instanceof CallHandle c
                        ? c
                        : null;
                return handler.apply(new ToolArgs(name, request.arguments(), arguments, call));
              } catch (PysandboxException e) {
                return ToolResults.error(e);
              } catch (RuntimeException e) {
                log.error("tool {} failed", name, e);
                return ToolResults.error(
                    ErrorCode.INTERNAL,
                    name + " failed inside the server (a bug; the server's log has the details)");
              }
            })
        .build();
  }
}

package dev.pysandbox.mcp;

import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SandboxService;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resource methods the MCP Java SDK 2.1.0 server cannot serve per tenant, answered by the
 * transports before the SDK sees them: its {@code resources/list} lists a fixed set of resources
 * (no cursor, the same for every caller), and its {@code resources/subscribe} records any URI
 * without asking the server and offers no way to learn what was subscribed to. Both transports
 * (stdio, and {@link McpHttpFront} over HTTP) hand these requests here, with the same transport
 * context the SDK would give a handler, so the caller's tenant is found exactly as for tools.
 */
final class ResourceMethods {
  private static final Logger log = LoggerFactory.getLogger(ResourceMethods.class);

  private static final Set<String> METHODS =
      Set.of(
          McpSchema.METHOD_RESOURCES_LIST,
          McpSchema.METHOD_RESOURCES_SUBSCRIBE,
          McpSchema.METHOD_RESOURCES_UNSUBSCRIBE);

  private final Function<McpTransportContext, SandboxService> services;
  private final RunSubscriptions subscriptions;

  ResourceMethods(
      Function<McpTransportContext, SandboxService> services, RunSubscriptions subscriptions) {
    this.services = services;
    this.subscriptions = subscriptions;
  }

  /** True for a request method answered here rather than by the SDK. */
  static boolean handles(String method) {
    return method != null && METHODS.contains(method);
  }

  /**
   * Answers one request.
   *
   * @param mcpSessionId the MCP session the request came in
   * @return the response to send, never null
   */
  McpSchema.JSONRPCResponse answer(
      McpTransportContext context, String mcpSessionId, McpSchema.JSONRPCRequest request) {
    try {
      Object result = result(context, mcpSessionId, request.method(), params(request));
      return new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, request.id(), result, null);
    } catch (McpError e) {
      McpSchema.JSONRPCResponse.JSONRPCError error = e.getJsonRpcError();
      return McpSchema.JSONRPCResponse.error(
          request.id(),
          error != null
              ? error
              : new McpSchema.JSONRPCResponse.JSONRPCError(
                  McpSchema.ErrorCodes.INTERNAL_ERROR, e.getMessage(), null));
    } catch (PysandboxException e) {
      return answer(request, RunResources.error(e));
    } catch (RuntimeException e) {
      log.error("{} failed", request.method(), e);
      return McpSchema.JSONRPCResponse.error(
          request.id(),
          new McpSchema.JSONRPCResponse.JSONRPCError(
              McpSchema.ErrorCodes.INTERNAL_ERROR,
              "Internal error: " + request.method() + " failed (the server's log says why)",
              null));
    }
  }

  /** The MCP session ended. */
  void sessionClosed(String mcpSessionId) {
    subscriptions.sessionClosed(mcpSessionId);
  }

  private static McpSchema.JSONRPCResponse answer(
      McpSchema.JSONRPCRequest request, McpError error) {
    return McpSchema.JSONRPCResponse.error(request.id(), error.getJsonRpcError());
  }

  private Object result(
      McpTransportContext context, String mcpSessionId, String method, Map<?, ?> params) {
    SandboxService service = services.apply(context);
    switch (method) {
      case McpSchema.METHOD_RESOURCES_LIST -> {
        Object cursor = params.get("cursor");
        if (cursor != null && !(cursor instanceof String)) {
          throw invalid("resources/list: \"cursor\" must be a string");
        }
        return ResourceList.page(service, (String) cursor);
      }
      case McpSchema.METHOD_RESOURCES_SUBSCRIBE -> {
        subscriptions.subscribe(service, mcpSessionId, uri(method, params));
        return Map.of();
      }
      case McpSchema.METHOD_RESOURCES_UNSUBSCRIBE -> {
        subscriptions.unsubscribe(mcpSessionId, uri(method, params));
        return Map.of();
      }
      default -> throw new IllegalArgumentException("not a resource method: " + method);
    }
  }

  private static Map<?, ?> params(McpSchema.JSONRPCRequest request) {
    if (request.params() == null) {
      return Map.of();
    }
    if (request.params() instanceof Map<?, ?> m) {
      return m;
    }
    throw invalid("\"params\" of " + request.method() + " must be an object");
  }

  private static String uri(String method, Map<?, ?> params) {
    if (params.get("uri") instanceof String uri && !uri.isEmpty()) {
      return uri;
    }
    throw invalid(method + " needs params {\"uri\": <a resource URI>}");
  }

  private static McpError invalid(String why) {
    return McpError.builder(McpSchema.ErrorCodes.INVALID_PARAMS)
        .message("Invalid params: " + why)
        .build();
  }
}

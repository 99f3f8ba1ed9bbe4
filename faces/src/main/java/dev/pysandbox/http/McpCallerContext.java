package dev.pysandbox.http;

import dev.pysandbox.api.LongCalls;
import dev.pysandbox.mcp.McpFace;
import io.modelcontextprotocol.common.McpTransportContext;
import jakarta.servlet.http.HttpServletRequest;
import java.util.HashMap;
import java.util.Map;

/**
 * What an MCP call over HTTP learns of its request, for the MCP transport's context: the caller's
 * tenant and the request's id (which the filters put on the request) and the caller's long-call
 * slots ({@link LongCalls}), so that a tool acts on the right tenant and takes its slots.
 */
final class McpCallerContext {
  private McpCallerContext() {}

  static McpTransportContext of(HttpServletRequest request) {
    Map<String, Object> values = new HashMap<>();
    Object tenant = request.getAttribute(HttpFace.TENANT_ATTRIBUTE);
    if (tenant != null) {
      values.put(McpFace.TENANT_KEY, tenant);
    }
    Object id = request.getAttribute(HttpFace.REQUEST_ID_ATTRIBUTE);
    if (id != null) {
      values.put(McpFace.REQUEST_ID_KEY, id);
    }
    Object longCalls = request.getAttribute(LongCalls.ATTRIBUTE);
    if (longCalls != null) {
      values.put(LongCalls.ATTRIBUTE, longCalls);
    }
    return McpTransportContext.create(values);
  }
}

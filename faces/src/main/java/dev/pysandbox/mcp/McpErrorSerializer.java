package dev.pysandbox.mcp;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import org.slf4j.LoggerFactory;

/**
 * Error answers in our words. An {@link McpError} written with the protocol's mapper becomes a
 * JSON-RPC error response, {@code {"jsonrpc":"2.0","id":null,"error":{"code","message"}}}, never
 * the exception with its stack trace (Jackson's default); and {@link #ownWords} replaces the text
 * of a handler's failure, which the SDK would send as it is.
 */
final class McpErrorSerializer extends StdSerializer<McpError> {
  private static final long serialVersionUID = 1L;

  private McpErrorSerializer() {
    super(McpError.class);
  }

  static SimpleModule module() {
    return new SimpleModule("pysandbox-mcp-errors").addSerializer(new McpErrorSerializer());
  }

  @Override
  public void serialize(McpError e, JsonGenerator g, SerializerProvider provider)
      throws IOException {
    McpSchema.JSONRPCResponse.JSONRPCError error = e.getJsonRpcError();
    g.writeStartObject();
    g.writeStringField("jsonrpc", McpSchema.JSONRPC_VERSION);
    g.writeNullField("id");
    g.writeObjectFieldStart("error");
    g.writeNumberField("code", error == null ? McpSchema.ErrorCodes.INTERNAL_ERROR : error.code());
    g.writeStringField("message", error == null ? e.getMessage() : error.message());
    if (error != null && error.data() != null) {
      g.writeObjectField("data", error.data());
    }
    g.writeEndObject();
    g.writeEndObject();
  }

  /**
   * The SDK answers a handler that failed with the exception's text: the answer the client gets
   * instead, with no Java in it (the log has the text).
   */
  static McpSchema.JSONRPCMessage ownWords(McpSchema.JSONRPCResponse r) {
    if (r.error() == null || r.error().code() != McpSchema.ErrorCodes.INTERNAL_ERROR) {
      return r;
    }
    LoggerFactory.getLogger(McpErrorSerializer.class)
        .warn("request {} failed inside the server: {}", r.id(), r.error().message());
    return McpSchema.JSONRPCResponse.error(
        r.id(),
        new McpSchema.JSONRPCResponse.JSONRPCError(
            McpSchema.ErrorCodes.INTERNAL_ERROR,
            "Internal error: the server could not handle this request (its log says why)",
            null));
  }
}

package dev.pysandbox.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import java.util.Map;

/**
 * The SDK's JSON Schema validator, loaded the first time something needs it rather than at start-up
 * (loading it costs about 30 ms, and an MCP client waits for the tool list). Tool arguments are
 * checked by {@link ToolArgs}, so in practice it loads only if a tool declares an output schema.
 */
final class LazySchemaValidator implements JsonSchemaValidator {
  private volatile JsonSchemaValidator delegate;

  private JsonSchemaValidator delegate() {
    JsonSchemaValidator d = delegate;
    if (d == null) {
      synchronized (this) {
        d = delegate;
        if (d == null) {
          d = McpJsonDefaults.getSchemaValidator();
          delegate = d;
        }
      }
    }
    return d;
  }

  @Override
  public ValidationResponse validate(Map<String, Object> schema, Object structuredContent) {
    return delegate().validate(schema, structuredContent);
  }

  @Override
  public ValidationResponse validateSchema(Map<String, Object> schema) {
    return delegate().validateSchema(schema);
  }
}

package dev.pysandbox.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import java.util.Map;

/**
 * The JSON Schema validator the SDK is given. Tool arguments are checked by {@link ToolArgs} (every
 * bad argument gets our {@code invalid_argument} naming it), and a tool result needs no check at
 * run time: its {@code structuredContent} is the very record its {@code outputSchema} is derived
 * from ({@link OutputSchemas}), so validating it on every call would cost time on the hot path to
 * prove what holds by construction ({@code McpStdioIT} checks results and errors against the
 * schemas with the SDK's real validator). Checking a schema itself — which the SDK does when a tool
 * is added at run time — loads the SDK's validator on first use (about 30 ms, kept off start-up).
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

  /** Our own results, valid by construction; see the class comment. */
  @Override
  public ValidationResponse validate(Map<String, Object> schema, Object structuredContent) {
    return ValidationResponse.asValid(null);
  }

  @Override
  public ValidationResponse validateSchema(Map<String, Object> schema) {
    return delegate().validateSchema(schema);
  }
}

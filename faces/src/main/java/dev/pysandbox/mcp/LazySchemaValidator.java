package dev.pysandbox.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The JSON Schema validator the SDK is given. Tool arguments are checked by {@link ToolArgs} (every
 * bad argument gets our {@code invalid_argument} naming it), and a tool result needs no check at
 * run time: its {@code structuredContent} is the very record its {@code outputSchema} is derived
 * from ({@link OutputSchemas}), so validating it on every call would cost time on the hot path to
 * prove what holds by construction ({@code McpStdioIT} checks results and errors against the
 * schemas with the SDK's real validator). The SDK checks every tool's schemas when the server is
 * built: the schemas of the tools this server was made with are derived from the operations'
 * declarations, the same in every build, and are checked once by a test ({@code McpFaceToolsTest})
 * rather than on every start (a sixth of a server's start-up CPU). Any other schema — a tool added
 * at run time — is checked by the SDK's validator, loaded on first use.
 */
final class LazySchemaValidator implements JsonSchemaValidator {
  private volatile JsonSchemaValidator delegate;

  /** The schema objects of the tools the server was built with (by identity). */
  private final Set<Map<String, Object>> declared =
      Collections.newSetFromMap(new IdentityHashMap<>());

  /**
   * @param tools the server's own tools, whose schemas come from the operations' declarations
   */
  LazySchemaValidator(List<SyncToolSpecification> tools) {
    for (SyncToolSpecification t : tools) {
      if (t.tool().inputSchema() != null) {
        declared.add(t.tool().inputSchema());
      }
      if (t.tool().outputSchema() != null) {
        declared.add(t.tool().outputSchema());
      }
    }
  }

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
    if (declared.contains(schema)) {
      return ValidationResponse.asValid(null);
    }
    return delegate().validateSchema(schema);
  }
}

package dev.pysandbox.mcp;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SandboxService;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpServerFeatures.SyncResourceTemplateSpecification;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A run's images as MCP resources, so that a tool result can name an image it sent once and a
 * client can read it again: {@code pysandbox://runs/<run id>/displays/<n>} and {@code
 * pysandbox://runs/<run id>/result}.
 */
final class RunResources {
  private static final String PREFIX = "pysandbox://runs/";
  private static final Pattern URI =
      Pattern.compile("pysandbox://runs/(" + Ids.REGEX + ")/(?:displays/(\\d{1,6})|result)");

  private RunResources() {}

  static String displayUri(String runId, int index) {
    return PREFIX + runId + "/displays/" + index;
  }

  static String resultUri(String runId) {
    return PREFIX + runId + "/result";
  }

  static List<SyncResourceTemplateSpecification> specs(
      Function<McpTransportContext, SandboxService> services) {
    return List.of(
        spec(
            PREFIX + "{run_id}/displays/{index}",
            "run-display",
            "A display output of a run (a chart, say): its images, by the run id and the"
                + " display's index.",
            services),
        spec(
            PREFIX + "{run_id}/result",
            "run-result",
            "The image of a run's trailing expression, when it was one.",
            services));
  }

  private static SyncResourceTemplateSpecification spec(
      String template,
      String name,
      String description,
      Function<McpTransportContext, SandboxService> services) {
    return new SyncResourceTemplateSpecification(
        McpSchema.ResourceTemplate.builder(template, name).description(description).build(),
        (exchange, request) -> read(services.apply(exchange.transportContext()), request.uri()));
  }

  private static McpSchema.ReadResourceResult read(SandboxService service, String uri) {
    Matcher m = URI.matcher(uri == null ? "" : uri);
    if (!m.matches()) {
      throw notFound("no such resource: " + uri);
    }
    RunRecord run;
    try {
      run = service.getRun(m.group(1), false);
    } catch (PysandboxException e) {
      if (e.code() == ErrorCode.NOT_FOUND || e.code() == ErrorCode.INVALID_ARGUMENT) {
        throw notFound(e.getMessage());
      }
      throw McpError.builder(McpSchema.ErrorCodes.INTERNAL_ERROR).message(e.getMessage()).build();
    }
    Map<String, Object> bundle;
    if (m.group(2) == null) {
      bundle = run.result();
    } else {
      int index = Integer.parseInt(m.group(2));
      bundle = index < run.displays().size() ? run.displays().get(index) : null;
    }
    List<McpSchema.ResourceContents> contents = new ArrayList<>();
    if (bundle != null) {
      bundle.forEach(
          (type, value) -> {
            if (type.startsWith("image/") && !type.contains("svg") && value instanceof String b64) {
              contents.add(McpSchema.BlobResourceContents.builder(uri, b64).mimeType(type).build());
            }
          });
    }
    if (contents.isEmpty()) {
      throw notFound(uri + ": the run has no image there");
    }
    return McpSchema.ReadResourceResult.builder(contents).build();
  }

  private static McpError notFound(String message) {
    return McpError.builder(McpSchema.ErrorCodes.RESOURCE_NOT_FOUND).message(message).build();
  }
}

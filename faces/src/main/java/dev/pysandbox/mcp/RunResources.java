package dev.pysandbox.mcp;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.util.Sha256;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpServerFeatures.SyncResourceTemplateSpecification;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Runs and files as MCP resources (the templates, and {@code resources/read}), each read on the
 * service of the caller's tenant, as tools are:
 *
 * <ul>
 *   <li>{@code pysandbox://runs/{run_id}}: the run's record, as {@code get_run} gives it (code
 *       included, images replaced by the URIs below);
 *   <li>{@code pysandbox://runs/{run_id}/files/{+path}}: a file as that run left it;
 *   <li>{@code pysandbox://sessions/{session_id}/files/{+path}}: a session's file as it is now;
 *   <li>{@code pysandbox://runs/{run_id}/displays/{index}} and {@code …/result}: a run's images, so
 *       that a tool result can name an image it sent once.
 * </ul>
 *
 * Files are read by the core's {@code readArtifact} (by descriptor, no link followed, at most
 * {@code read_max_bytes}). What is text (a {@code text/*}, JSON, XML or YAML type, UTF-8, at most
 * {@link #TEXT_MAX_BYTES}) is answered as text, anything else as a base64 blob. Another tenant's
 * run or session is answered exactly as one that does not exist.
 */
final class RunResources {
  /** JSON-RPC's range for server errors: a failure that is neither the caller's nor a bug. */
  static final int SERVER_ERROR = -32000;

  /** Text larger than this is answered as a blob, so that a client can save it unread. */
  static final int TEXT_MAX_BYTES = 1 << 20;

  private RunResources() {}

  static String displayUri(String runId, int index) {
    return ResourceUri.display(runId, index);
  }

  static String resultUri(String runId) {
    return ResourceUri.result(runId);
  }

  static List<SyncResourceTemplateSpecification> specs(
      Function<McpTransportContext, SandboxService> services) {
    return List.of(
        spec(
            ResourceUri.RUNS + "{run_id}",
            "run",
            "A run's record as JSON, as get_run gives it: code, status, stdout, stderr, error,"
                + " result, files changed. Subscribe to hear when a running run ends.",
            "application/json",
            services),
        spec(
            ResourceUri.RUNS + "{run_id}/files/{+path}",
            "run-file",
            "A file as the run left it in /mnt/data (path relative to /mnt/data, percent-encoded"
                + " where needed).",
            null,
            services),
        spec(
            ResourceUri.SESSIONS + "{session_id}/files/{+path}",
            "session-file",
            "A file of a session's /mnt/data as it is now (path relative to /mnt/data).",
            null,
            services),
        spec(
            ResourceUri.RUNS + "{run_id}/displays/{index}",
            "run-display",
            "A display output of a run (a chart, say): its images, by the run id and the"
                + " display's index.",
            null,
            services),
        spec(
            ResourceUri.RUNS + "{run_id}/result",
            "run-result",
            "The image of a run's trailing expression, when it was one.",
            null,
            services));
  }

  private static SyncResourceTemplateSpecification spec(
      String template,
      String name,
      String description,
      String mimeType,
      Function<McpTransportContext, SandboxService> services) {
    return new SyncResourceTemplateSpecification(
        McpSchema.ResourceTemplate.builder(template, name)
            .description(description)
            .mimeType(mimeType)
            .build(),
        (exchange, request) -> read(services.apply(exchange.transportContext()), request.uri()));
  }

  /** Reads one resource on {@code service}, or fails with the JSON-RPC error to answer. */
  static McpSchema.ReadResourceResult read(SandboxService service, String uri) {
    ResourceUri parsed;
    try {
      parsed = ResourceUri.parse(uri);
    } catch (ResourceUri.BadPath e) {
      throw error(McpSchema.ErrorCodes.INVALID_PARAMS, ErrorCode.INVALID_ARGUMENT, e.getMessage());
    }
    if (parsed == null) {
      throw notFound("no such resource: " + uri);
    }
    try {
      return McpSchema.ReadResourceResult.builder(
              switch (parsed.kind()) {
                case RUN -> List.of(record(service.getRun(parsed.runId(), true), uri));
                case RUN_FILE, SESSION_FILE ->
                    List.of(
                        file(
                            service.readArtifact(
                                parsed.runId(), parsed.sessionId(), parsed.path(), Long.MAX_VALUE),
                            uri));
                case RUN_DISPLAY, RUN_RESULT ->
                    images(service.getRun(parsed.runId(), false), parsed, uri);
              })
          .build();
    } catch (PysandboxException e) {
      throw error(e);
    }
  }

  /**
   * The record as {@code get_run} shows it: each image of a display or of the result is replaced by
   * its media type, size, sha256 and the URI that reads it, so that the record stays as small as
   * the run's text output.
   */
  private static McpSchema.ResourceContents record(RunRecord run, String uri) {
    Map<String, Object> json = Json.toMap(run);
    if (json.get("displays") instanceof List<?> displays) {
      List<Object> out = new ArrayList<>();
      for (int i = 0; i < displays.size(); i++) {
        out.add(imageRefs(displays.get(i), ResourceUri.display(run.runId(), i)));
      }
      json.put("displays", out);
    }
    if (json.get("result") != null) {
      json.put("result", imageRefs(json.get("result"), ResourceUri.result(run.runId())));
    }
    return contents(uri, "application/json", Json.write(json).getBytes(StandardCharsets.UTF_8));
  }

  private static Object imageRefs(Object bundle, String uri) {
    if (!(bundle instanceof Map<?, ?> m)) {
      return bundle;
    }
    Map<String, Object> out = new LinkedHashMap<>();
    m.forEach(
        (k, v) -> {
          String type = String.valueOf(k);
          byte[] bytes = null;
          if (isImage(type) && v instanceof String base64) {
            try {
              bytes = Base64.getMimeDecoder().decode(base64);
            } catch (IllegalArgumentException e) {
              // not an image we can describe: left as it is
            }
          }
          out.put(
              type,
              bytes == null
                  ? v
                  : Map.of(
                      "media_type",
                      type,
                      "size_bytes",
                      bytes.length,
                      "sha256",
                      Sha256.hex(bytes),
                      "uri",
                      uri));
        });
    return out;
  }

  private static boolean isImage(String type) {
    return type.startsWith("image/") && !type.contains("svg");
  }

  private static McpSchema.ResourceContents file(ArtifactContent c, String uri) {
    if (c.content() != null && isText(c.mediaType()) && c.sizeBytes() <= TEXT_MAX_BYTES) {
      return McpSchema.TextResourceContents.builder(uri, c.content())
          .mimeType(c.mediaType())
          .build();
    }
    String base64 =
        c.contentBase64() != null
            ? c.contentBase64()
            : Base64.getEncoder().encodeToString(c.content().getBytes(StandardCharsets.UTF_8));
    return McpSchema.BlobResourceContents.builder(uri, base64).mimeType(c.mediaType()).build();
  }

  private static McpSchema.ResourceContents contents(String uri, String mimeType, byte[] bytes) {
    if (bytes.length <= TEXT_MAX_BYTES) {
      return McpSchema.TextResourceContents.builder(uri, new String(bytes, StandardCharsets.UTF_8))
          .mimeType(mimeType)
          .build();
    }
    return McpSchema.BlobResourceContents.builder(uri, Base64.getEncoder().encodeToString(bytes))
        .mimeType(mimeType)
        .build();
  }

  /** Media types a client can show as text. */
  static boolean isText(String mediaType) {
    return mediaType.startsWith("text/")
        || mediaType.equals("application/json")
        || mediaType.equals("application/jsonl")
        || mediaType.equals("application/xml")
        || mediaType.equals("application/yaml")
        || mediaType.endsWith("+json")
        || mediaType.endsWith("+xml");
  }

  private static List<McpSchema.ResourceContents> images(
      RunRecord run, ResourceUri parsed, String uri) {
    Map<String, Object> bundle;
    if (parsed.kind() == ResourceUri.Kind.RUN_RESULT) {
      bundle = run.result();
    } else {
      bundle = parsed.index() < run.displays().size() ? run.displays().get(parsed.index()) : null;
    }
    List<McpSchema.ResourceContents> contents = new ArrayList<>();
    if (bundle != null) {
      bundle.forEach(
          (type, value) -> {
            if (isImage(type) && value instanceof String b64) {
              contents.add(McpSchema.BlobResourceContents.builder(uri, b64).mimeType(type).build());
            }
          });
    }
    if (contents.isEmpty()) {
      throw notFound(uri + ": the run has no image there");
    }
    return contents;
  }

  /**
   * The JSON-RPC error for a core failure: {@code -32002} (resource not found) for what does not
   * exist or is another tenant's, {@code -32602} for what the caller asked wrongly (a path that is
   * not plain, a link, a file over the limit), {@code -32603} for a bug, {@code -32000} for the
   * rest (the store unavailable, a session busy: {@code data.retryable} says whether to try again);
   * {@code data.code} carries pysandbox's error code.
   */
  static McpError error(PysandboxException e) {
    int code =
        switch (e.code()) {
          case NOT_FOUND -> McpSchema.ErrorCodes.RESOURCE_NOT_FOUND;
          case INVALID_ARGUMENT, FORBIDDEN, ARTIFACT_TOO_LARGE ->
              McpSchema.ErrorCodes.INVALID_PARAMS;
          case INTERNAL -> McpSchema.ErrorCodes.INTERNAL_ERROR;
          default -> SERVER_ERROR;
        };
    return error(code, e.code(), e.getMessage());
  }

  static McpError notFound(String message) {
    return error(McpSchema.ErrorCodes.RESOURCE_NOT_FOUND, ErrorCode.NOT_FOUND, message);
  }

  /** {@code -32602} with {@code invalid_argument}: what the caller asked wrongly. */
  static McpError invalidParams(String message) {
    return error(McpSchema.ErrorCodes.INVALID_PARAMS, ErrorCode.INVALID_ARGUMENT, message);
  }

  static McpError error(int jsonRpcCode, ErrorCode code, String message) {
    return McpError.builder(jsonRpcCode)
        .message(message)
        .data(Map.of("code", code.wireName(), "retryable", code.retryable()))
        .build();
  }
}

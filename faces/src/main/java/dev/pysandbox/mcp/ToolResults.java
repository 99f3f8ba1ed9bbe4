package dev.pysandbox.mcp;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.ResultOutputLimit;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunText;
import dev.pysandbox.util.Sha256;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Turns core results into MCP tool results: {@code structuredContent} with the JSON of the result,
 * a short text rendering for clients that only show text, PNG displays as image content, and
 * failures as {@code isError} results shaped {@code {"error": {"code", "message"}}}.
 */
final class ToolResults {
  private static final int MAX_TEXT_SECTION = 20_000;

  private ToolResults() {}

  /**
   * A listing's result: {@code value}, and as text the line {@code head}, then one line per item.
   */
  static <T> McpSchema.CallToolResult listing(
      Object value, String head, List<T> items, Function<T, String> line) {
    StringBuilder text = new StringBuilder(head).append('\n');
    items.forEach(item -> text.append(line.apply(item)).append('\n'));
    return ok(value, text.toString());
  }

  static McpSchema.CallToolResult ok(Object value, String text) {
    return McpSchema.CallToolResult.builder()
        .structuredContent(Json.toMap(value))
        .addTextContent(text)
        .isError(false)
        .build();
  }

  static McpSchema.CallToolResult error(PysandboxException e) {
    return error(e.code(), e.getMessage(), e.retryable());
  }

  static McpSchema.CallToolResult error(ErrorCode code, String message) {
    return error(code, message, code.retryable());
  }

  private static McpSchema.CallToolResult error(ErrorCode code, String message, boolean retryable) {
    Map<String, Object> err = new LinkedHashMap<>();
    err.put("code", code.wireName());
    err.put("message", message);
    err.put("retryable", retryable);
    return McpSchema.CallToolResult.builder()
        .structuredContent(Map.of("error", err))
        .addTextContent("error " + code.wireName() + ": " + message)
        .isError(true)
        .build();
  }

  /** Image types sent as MCP image content (SVG is text, and stays in the bundle). */
  private static final List<String> IMAGE_TYPES =
      List.of("image/png", "image/jpeg", "image/gif", "image/webp");

  /**
   * A run: its JSON, a readable summary, and every image as image content, sent once: in
   * structuredContent each image's data is replaced by its media type, size, sha256, the index of
   * its image content and a resource URI that reads it again.
   *
   * @param outputLimit bytes of stdout and of stderr this result carries (head and tail, flagged);
   *     0 carries what the record kept
   */
  static McpSchema.CallToolResult run(RunRecord run, int outputLimit) {
    Map<String, Object> json = Json.toMap(run);
    List<McpSchema.Content> images = new ArrayList<>();
    if (json.get("displays") instanceof List<?> displays) {
      List<Object> out = new ArrayList<>();
      for (int i = 0; i < displays.size(); i++) {
        out.add(imagesOut(displays.get(i), RunResources.displayUri(run.runId(), i), images));
      }
      json.put("displays", out);
    }
    if (json.get("result") != null) {
      json.put(
          "result", imagesOut(json.get("result"), RunResources.resultUri(run.runId()), images));
    }
    ResultOutputLimit.apply(json, outputLimit);
    McpSchema.CallToolResult.Builder b =
        McpSchema.CallToolResult.builder()
            .structuredContent(json)
            .addTextContent(RunText.summary(run))
            .isError(false);
    images.forEach(b::addContent);
    return b.build();
  }

  private static Object imagesOut(Object bundle, String uri, List<McpSchema.Content> images) {
    if (!(bundle instanceof Map<?, ?> m)) {
      return bundle;
    }
    Map<String, Object> out = new LinkedHashMap<>();
    m.forEach((k, v) -> out.put(String.valueOf(k), v));
    for (String type : IMAGE_TYPES) {
      if (out.get(type) instanceof String base64) {
        byte[] bytes;
        try {
          bytes = Base64.getMimeDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
          continue; // not an image we can describe: left as it is
        }
        Map<String, Object> ref = new LinkedHashMap<>();
        ref.put("media_type", type);
        ref.put("size_bytes", bytes.length);
        ref.put("sha256", Sha256.hex(bytes));
        ref.put("content_index", images.size() + 1);
        ref.put("uri", uri);
        out.put(type, ref);
        images.add(McpSchema.ImageContent.builder(base64, type).build());
      }
    }
    return out;
  }

  /**
   * A file: its JSON, and an image as image content, sent once: its structuredContent then carries
   * {@code image_content_index} instead of {@code content_base64}.
   */
  static McpSchema.CallToolResult artifact(ArtifactContent c) {
    String text =
        c.content() != null
            ? c.content()
            : c.path()
                + ": "
                + c.sizeBytes()
                + " bytes of "
                + c.mediaType()
                + (IMAGE_TYPES.contains(c.mediaType())
                    ? " (image content)"
                    : " (base64 in structuredContent)");
    Map<String, Object> json = Json.toMap(c);
    McpSchema.CallToolResult.Builder b =
        McpSchema.CallToolResult.builder()
            .addTextContent(
                text.length() > MAX_TEXT_SECTION
                    ? text.substring(0, MAX_TEXT_SECTION) + "\n[...]"
                    : text)
            .isError(false);
    if (c.contentBase64() != null && IMAGE_TYPES.contains(c.mediaType())) {
      b.addContent(McpSchema.ImageContent.builder(c.contentBase64(), c.mediaType()).build());
      json.put("content_base64", null);
      json.put("image_content_index", 1);
    }
    return b.structuredContent(json).build();
  }
}

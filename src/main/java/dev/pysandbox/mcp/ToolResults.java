package dev.pysandbox.mcp;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunRecord;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns core results into MCP tool results: {@code structuredContent} with the JSON of the result,
 * a short text rendering for clients that only show text, PNG displays as image content, and
 * failures as {@code isError} results shaped {@code {"error": {"code", "message"}}}.
 */
final class ToolResults {
  private static final int MAX_TEXT_SECTION = 20_000;

  private ToolResults() {}

  static McpSchema.CallToolResult ok(Object value, String text) {
    return McpSchema.CallToolResult.builder()
        .structuredContent(Json.toMap(value))
        .addTextContent(text)
        .isError(false)
        .build();
  }

  static McpSchema.CallToolResult error(PysandboxException e) {
    return error(e.code(), e.getMessage());
  }

  static McpSchema.CallToolResult error(ErrorCode code, String message) {
    Map<String, Object> err = new LinkedHashMap<>();
    err.put("code", code.wireName());
    err.put("message", message);
    err.put("retryable", code.retryable());
    return McpSchema.CallToolResult.builder()
        .structuredContent(Map.of("error", err))
        .addTextContent("error " + code.wireName() + ": " + message)
        .isError(true)
        .build();
  }

  /** A run: the JSON, a readable summary, and every PNG display as an image. */
  static McpSchema.CallToolResult run(RunRecord run) {
    McpSchema.CallToolResult.Builder b =
        McpSchema.CallToolResult.builder()
            .structuredContent(Json.toMap(run))
            .addTextContent(render(run))
            .isError(false);
    List<Map<String, Object>> bundles = new ArrayList<>(run.displays());
    if (run.result() != null) {
      bundles.add(run.result());
    }
    for (Map<String, Object> bundle : bundles) {
      if (bundle.get("image/png") instanceof String png) {
        b.addContent(McpSchema.ImageContent.builder(png, "image/png").build());
      }
    }
    return b.build();
  }

  /** A file: its JSON, and images also as image content. */
  static McpSchema.CallToolResult artifact(ArtifactContent c) {
    String text =
        c.content() != null
            ? c.content()
            : c.path()
                + ": "
                + c.sizeBytes()
                + " bytes of "
                + c.mediaType()
                + " (base64 in structuredContent)";
    McpSchema.CallToolResult.Builder b =
        McpSchema.CallToolResult.builder()
            .structuredContent(Json.toMap(c))
            .addTextContent(
                text.length() > MAX_TEXT_SECTION
                    ? text.substring(0, MAX_TEXT_SECTION) + "\n[...]"
                    : text)
            .isError(false);
    if (c.contentBase64() != null
        && c.mediaType().startsWith("image/")
        && !c.mediaType().contains("svg")) {
      b.addContent(McpSchema.ImageContent.builder(c.contentBase64(), c.mediaType()).build());
    }
    return b.build();
  }

  static String render(RunRecord run) {
    StringBuilder s = new StringBuilder();
    s.append("run ").append(run.runId()).append(": ").append(run.status().wireName());
    if (run.durationMs() != null) {
      s.append(" in ").append(run.durationMs()).append(" ms");
    }
    if (run.exitCode() != null && run.exitCode() != 0) {
      s.append(" (exit code ").append(run.exitCode()).append(')');
    }
    if (run.killReason() != null) {
      s.append(" [").append(run.killReason()).append(']');
    }
    s.append('\n');
    if (run.message() != null && (run.error() == null || run.killReason() != null)) {
      s.append(run.message()).append('\n');
    }
    section(s, "stdout", run.stdout(), run.stdoutTruncated());
    section(s, "stderr", run.stderr(), run.stderrTruncated());
    if (run.error() != null) {
      String tb = run.error().traceback();
      section(
          s,
          "error",
          tb != null && !tb.isBlank() ? tb : run.error().name() + ": " + run.error().value(),
          false);
    }
    if (run.result() != null && run.result().get("text/plain") instanceof String plain) {
      section(s, "result", plain, false);
    }
    if (!run.displays().isEmpty()) {
      s.append("[").append(run.displays().size()).append(" display output(s)]\n");
    }
    if (!run.outputs().isEmpty()) {
      section(s, "outputs", Json.write(run.outputs()), false);
    }
    if (!run.artifacts().isEmpty()) {
      s.append("--- files in /mnt/data ---\n");
      run.artifacts()
          .forEach(
              a ->
                  s.append(a.change())
                      .append(' ')
                      .append(a.path())
                      .append(" (")
                      .append(a.sizeBytes())
                      .append(" bytes, ")
                      .append(a.mediaType())
                      .append(")\n"));
    }
    return s.toString();
  }

  private static void section(StringBuilder s, String name, String text, boolean truncated) {
    if (text == null || text.isEmpty()) {
      return;
    }
    s.append("--- ").append(name).append(truncated ? " (truncated) ---\n" : " ---\n");
    if (text.length() > MAX_TEXT_SECTION) {
      s.append(text, 0, MAX_TEXT_SECTION / 2)
          .append("\n[... ")
          .append(text.length() - MAX_TEXT_SECTION)
          .append(" characters not shown here; see structuredContent ...]\n")
          .append(text, text.length() - MAX_TEXT_SECTION / 2, text.length());
    } else {
      s.append(text);
    }
    if (!text.endsWith("\n")) {
      s.append('\n');
    }
  }
}

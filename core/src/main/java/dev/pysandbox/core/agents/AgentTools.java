package dev.pysandbox.core.agents;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.FileInfo;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.agent.ToolCall;
import dev.pysandbox.api.agent.ToolSpec;
import java.util.List;
import java.util.Map;

/**
 * The tools an agent's model is offered: run_python(code), read_file(path) and list_files() of its
 * session's /mnt/data; and the checking of a call's name and arguments.
 */
final class AgentTools {
  static final String RUN_PYTHON = "run_python";
  static final String READ_FILE = "read_file";
  static final String LIST_FILES = "list_files";

  /** The most bytes read_file reads (the model is given at most agent_observation_chars). */
  static final long READ_MAX_BYTES = 1024 * 1024;

  /** The most files list_files names. */
  static final int LIST_MAX = 200;

  private static final ObjectMapper JSON = new ObjectMapper();

  static final List<ToolSpec> SPECS =
      List.of(
          new ToolSpec(
              RUN_PYTHON,
              "Run Python code in the session (state persists between calls; files in"
                  + " /mnt/data, the working directory). Returns stdout, stderr, the error with"
                  + " its traceback and the last expression's value.",
              Map.of(
                  "type", "object",
                  "properties",
                      Map.of("code", Map.of("type", "string", "description", "Python code")),
                  "required", List.of("code"))),
          new ToolSpec(
              READ_FILE,
              "Read a text file of the session's /mnt/data.",
              Map.of(
                  "type", "object",
                  "properties",
                      Map.of(
                          "path",
                          Map.of(
                              "type", "string",
                              "description", "Path relative to /mnt/data")),
                  "required", List.of("path"))),
          new ToolSpec(
              LIST_FILES,
              "List the files of the session's /mnt/data with their sizes.",
              Map.of("type", "object", "properties", Map.of())));

  private AgentTools() {}

  /** A call's arguments, or a refusal in words. */
  record Checked(String code, String path, String refusal) {}

  static Checked check(ToolCall call) {
    String name = call.name();
    if (!RUN_PYTHON.equals(name) && !READ_FILE.equals(name) && !LIST_FILES.equals(name)) {
      return new Checked(
          null,
          null,
          "there is no tool "
              + PysandboxException.quote(name)
              + ": the tools are run_python, read_file and list_files");
    }
    JsonNode args;
    try {
      String raw = call.arguments() == null || call.arguments().isBlank() ? "{}" : call.arguments();
      args = JSON.readTree(raw);
    } catch (java.io.IOException e) {
      return new Checked(null, null, name + ": the arguments are not a JSON object");
    }
    if (args == null || !args.isObject()) {
      return new Checked(null, null, name + ": the arguments are not a JSON object");
    }
    if (RUN_PYTHON.equals(name)) {
      JsonNode code = args.get("code");
      if (code == null || !code.isTextual() || code.asText().isBlank()) {
        return new Checked(null, null, "run_python needs code, a string of Python");
      }
      return new Checked(code.asText(), null, null);
    }
    if (READ_FILE.equals(name)) {
      JsonNode path = args.get("path");
      if (path == null || !path.isTextual() || path.asText().isBlank()) {
        return new Checked(null, null, "read_file needs path, relative to /mnt/data");
      }
      return new Checked(null, path.asText(), null);
    }
    return new Checked(null, null, null);
  }

  /** read_file: the file's text, bounded; or what went wrong, for the model. */
  static String readFile(SandboxService service, String sessionId, String path, int maxChars) {
    String rel = path.startsWith("/mnt/data/") ? path.substring("/mnt/data/".length()) : path;
    try {
      ArtifactContent c = service.readArtifact(null, sessionId, rel, READ_MAX_BYTES);
      if (c.content() == null) {
        return "error: "
            + rel
            + " is not text ("
            + c.mediaType()
            + ", "
            + c.sizeBytes()
            + " bytes)";
      }
      return Observations.bound(c.content(), maxChars);
    } catch (PysandboxException e) {
      return "error: " + e.code().wireName() + ": " + e.getMessage();
    }
  }

  /** list_files: a line per file, or what went wrong. */
  static String listFiles(SandboxService service, String sessionId) {
    try {
      return describe(service.listArtifacts(null, sessionId).files());
    } catch (PysandboxException e) {
      return "error: " + e.code().wireName() + ": " + e.getMessage();
    }
  }

  static String describe(List<FileInfo> files) {
    if (files.isEmpty()) {
      return "(no files in /mnt/data)";
    }
    StringBuilder b = new StringBuilder();
    files.stream()
        .limit(LIST_MAX)
        .forEach(f -> b.append(f.path()).append(" (").append(f.sizeBytes()).append(" bytes)\n"));
    if (files.size() > LIST_MAX) {
      b.append("… and ").append(files.size() - LIST_MAX).append(" more\n");
    }
    return b.toString();
  }
}

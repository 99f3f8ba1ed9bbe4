package dev.pysandbox.mcp;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.mcp.ToolFactory.Kind;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.List;
import java.util.Set;

/** The files group: upload into a session, list and read files of a session or a run. */
final class FileTools {
  static final long DEFAULT_MAX_SIZE = 5_000_000;

  private FileTools() {}

  static List<SyncToolSpecification> specs(ToolFactory f, SandboxService service) {
    return List.of(
        f.tool(
            "upload_file",
            "Upload a file",
            "Write a file into a session's /mnt/data (the session is created if needed). Give"
                + " text as content or bytes as content_base64.",
            Schemas.UPLOAD_FILE,
            UploadResult.class,
            Kind.WRITE,
            Set.of("session_id", "filename", "content", "content_base64", "overwrite"),
            a -> {
              UploadResult r =
                  service.uploadFile(
                      new UploadRequest(
                          a.requiredString("session_id"),
                          a.requiredString("filename"),
                          a.string("content"),
                          a.string("content_base64"),
                          a.bool("overwrite", false)));
              return ToolResults.ok(
                  r, "wrote /mnt/data/" + r.path() + " (" + r.sizeBytes() + " bytes)");
            }),
        f.tool(
            "list_artifacts",
            "List files",
            "List the files of a session's workspace (session_id) or those a run kept (run_id),"
                + " with size, sha256 and media type.",
            Schemas.LIST_ARTIFACTS,
            ArtifactList.class,
            Kind.READ,
            Set.of("session_id", "run_id"),
            a -> {
              ArtifactList l = service.listArtifacts(a.string("run_id"), a.string("session_id"));
              StringBuilder text = new StringBuilder(l.files().size() + " files\n");
              l.files()
                  .forEach(
                      x ->
                          text.append(x.path())
                              .append("  ")
                              .append(x.sizeBytes())
                              .append(" bytes  ")
                              .append(x.mediaType())
                              .append('\n'));
              return ToolResults.ok(l, text.toString());
            }),
        f.tool(
            "read_artifact",
            "Read a file",
            "Read one file of a session's workspace or of a run: text comes back as content,"
                + " anything else as content_base64. Symbolic links are never followed.",
            Schemas.READ_ARTIFACT,
            ArtifactContent.class,
            Kind.READ,
            Set.of("session_id", "run_id", "path", "max_size_bytes"),
            a -> {
              ArtifactContent c =
                  service.readArtifact(
                      a.string("run_id"),
                      a.string("session_id"),
                      a.requiredString("path"),
                      a.longValue("max_size_bytes", DEFAULT_MAX_SIZE));
              return ToolResults.artifact(c);
            }));
  }
}

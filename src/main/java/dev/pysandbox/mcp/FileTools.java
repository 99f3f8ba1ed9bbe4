package dev.pysandbox.mcp;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.api.op.Operations;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.List;

/** The files group: upload into a session, list and read files of a session or a run. */
final class FileTools {
  private FileTools() {}

  static List<SyncToolSpecification> specs(ToolFactory f) {
    return List.of(
        f.tool(
            Operations.UPLOAD_FILE,
            (service, a) -> {
              UploadResult r =
                  service.uploadFile(
                      new UploadRequest(
                          a.string("session_id"),
                          a.string("filename"),
                          a.string("content"),
                          a.string("content_base64"),
                          a.bool("overwrite")));
              return ToolResults.ok(
                  r, "wrote /mnt/data/" + r.path() + " (" + r.sizeBytes() + " bytes)");
            }),
        f.tool(
            Operations.LIST_ARTIFACTS,
            (service, a) -> {
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
            Operations.READ_ARTIFACT,
            (service, a) -> {
              ArtifactContent c =
                  service.readArtifact(
                      a.string("run_id"),
                      a.string("session_id"),
                      a.string("path"),
                      a.longInteger("max_size_bytes"));
              return ToolResults.artifact(c);
            }));
  }
}

package dev.pysandbox.mcp;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
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
            (UploadResult r) ->
                ToolResults.ok(
                    r, "wrote /mnt/data/" + r.path() + " (" + r.sizeBytes() + " bytes)")),
        f.tool(
            Operations.LIST_ARTIFACTS,
            (ArtifactList l) -> {
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
        f.tool(Operations.READ_ARTIFACT, (ArtifactContent c) -> ToolResults.artifact(c)));
  }
}

package dev.pysandbox.mcp;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.api.op.Operations;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.List;

/**
 * The files group: upload or download into a session, list and read files of a session or a run;
 * and the package environments.
 */
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
            Operations.DOWNLOAD_FILE,
            (dev.pysandbox.api.DownloadResult r) ->
                ToolResults.ok(
                    r,
                    "downloaded "
                        + r.finalUrl()
                        + " to "
                        + r.path()
                        + " ("
                        + r.sizeBytes()
                        + " bytes, "
                        + (r.contentType() == null ? "no content type" : r.contentType())
                        + ")")),
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
        f.tool(Operations.READ_ARTIFACT, (ArtifactContent c) -> ToolResults.artifact(c)),
        f.tool(
            Operations.LIST_ENVIRONMENTS,
            (dev.pysandbox.api.EnvironmentList l) -> {
              StringBuilder text =
                  new StringBuilder(
                      l.environments().size() + " environments, " + l.totalBytes() + " bytes\n");
              l.environments()
                  .forEach(
                      e ->
                          text.append(e.key())
                              .append("  ")
                              .append(e.sizeBytes())
                              .append(" bytes  ")
                              .append(e.runs())
                              .append(" runs  ")
                              .append(String.join(" ", e.requirements()))
                              .append('\n'));
              return ToolResults.ok(l, text.toString());
            }),
        f.tool(
            Operations.CLEAN_ENVIRONMENTS,
            (dev.pysandbox.api.EnvironmentCleanResult r) ->
                ToolResults.ok(
                    r,
                    (r.dryRun() ? "dry run: would remove " : "removed ")
                        + r.removed().size()
                        + " environments, "
                        + r.freedBytes()
                        + " bytes"
                        + (r.keptInUse().isEmpty()
                            ? ""
                            : "; kept (in use): " + String.join(" ", r.keptInUse())))));
  }
}

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
            (ArtifactList l) ->
                ToolResults.listing(
                    l,
                    l.files().size() + " files",
                    l.files(),
                    x -> x.path() + "  " + x.sizeBytes() + " bytes  " + x.mediaType())),
        f.tool(Operations.READ_ARTIFACT, (ArtifactContent c) -> ToolResults.artifact(c)),
        f.tool(
            Operations.LIST_ENVIRONMENTS,
            (dev.pysandbox.api.EnvironmentList l) ->
                ToolResults.listing(
                    l,
                    l.environments().size() + " environments, " + l.totalBytes() + " bytes",
                    l.environments(),
                    e ->
                        e.key()
                            + "  "
                            + e.sizeBytes()
                            + " bytes  "
                            + e.runs()
                            + " runs  "
                            + String.join(" ", e.requirements()))),
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

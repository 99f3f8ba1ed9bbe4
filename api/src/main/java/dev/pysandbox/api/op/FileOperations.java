package dev.pysandbox.api.op;

import static dev.pysandbox.api.op.Operation.Effect.DESTRUCTIVE;
import static dev.pysandbox.api.op.Operation.Effect.READ;
import static dev.pysandbox.api.op.Operation.Effect.WRITE;

import dev.pysandbox.api.ArtifactContent;
import dev.pysandbox.api.ArtifactList;
import dev.pysandbox.api.DownloadResult;
import dev.pysandbox.api.EnvironmentCleanResult;
import dev.pysandbox.api.EnvironmentList;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import java.util.List;

/**
 * The operations on files and package environments: upload_file, download_file, list_artifacts,
 * read_artifact, list_environments, clean_environments. Part of the catalogue {@link Operations},
 * which names them all.
 */
final class FileOperations {
  private FileOperations() {}

  // -- files -------------------------------------------------------------------------------------

  /** How long an environment may go unused before clean_environments removes it, by default. */
  public static final int DEFAULT_UNUSED_DAYS = 90;

  /** What read_artifact refuses above unless the call says otherwise. */
  public static final long DEFAULT_MAX_SIZE_BYTES = 5_000_000;

  // The arguments of the two operations that write a file into a session (upload and download).
  private static final Param RECEIVING_SESSION =
      Param.id("session_id", "The session whose /mnt/data receives the file (created if needed).")
          .required();
  private static final Param FILENAME =
      Param.string(
              "filename",
              "Where in /mnt/data: a name of letters, digits, '.', '_', '-', or a path with '/'"
                  + " between folders (made as needed), e.g. data/in.csv; no '..'.")
          .pattern(UploadRequest.FILENAME_REGEX)
          .required();
  private static final Param OVERWRITE =
      Param.bool("overwrite", "Replace a file of that name (else file_exists).")
          .defaultValue(false);

  public static final Operation UPLOAD_FILE =
      new Operation(
          "upload_file",
          "Upload a file",
          "Write a file into a session's /mnt/data (the session is created if needed). Give"
              + " text as content or bytes as content_base64.",
          WRITE,
          List.of(
              RECEIVING_SESSION,
              FILENAME,
              Param.string(
                  "content", "Text content (stored as UTF-8). Give this or content_base64."),
              Param.string(
                  "content_base64",
                  "Binary content, base64 (up to upload_max_bytes decoded, 50 MB by default)."),
              OVERWRITE),
          UploadResult.class);

  public static final Operation DOWNLOAD_FILE =
      new Operation(
          "download_file",
          "Download a file",
          "Fetch a URL on the server, through its network policy (the hosts in network_allow;"
              + " never private or loopback addresses), into a session's /mnt/data (the session"
              + " is created if needed). The code itself keeps no network. Returns size, sha256"
              + " and content type; a refused host is forbidden with the reason.",
          WRITE,
          List.of(
              RECEIVING_SESSION,
              Param.string("url", "An http or https URL.").required().minLength(1).maxLength(4096),
              FILENAME,
              OVERWRITE),
          DownloadResult.class);

  public static final Operation LIST_ENVIRONMENTS =
      new Operation(
          "list_environments",
          "List package environments",
          "List the cached package environments your runs and sessions used: key, requirements,"
              + " size, created, last used, runs, whether a sandbox has one now, pip freeze.",
          READ,
          List.of(),
          EnvironmentList.class);

  public static final Operation CLEAN_ENVIRONMENTS =
      new Operation(
          "clean_environments",
          "Remove unused package environments",
          "Remove cached package environments not used for older_than_days days (default 90; never"
              + " one a sandbox has). dry_run (default true) only says what would be removed; a"
              + " removed environment is built again when a run asks for it.",
          DESTRUCTIVE,
          List.of(
              Param.integer("older_than_days", "Remove those unused for this many days (0: any).")
                  .min(0)
                  .max(36_500)
                  .defaultValue(DEFAULT_UNUSED_DAYS),
              Param.bool("dry_run", "Only say what would be removed.").defaultValue(true)),
          EnvironmentCleanResult.class);

  public static final Operation LIST_ARTIFACTS =
      new Operation(
          "list_artifacts",
          "List files",
          "List the files of a session's workspace (session_id) or those a run kept (run_id),"
              + " with size, sha256 and media type.",
          READ,
          List.of(
              Param.id(
                  "session_id", "List the session's workspace as it is now. Give this or run_id."),
              Param.id("run_id", "List the files the run kept, as it left them.")),
          ArtifactList.class);

  public static final Operation READ_ARTIFACT =
      new Operation(
          "read_artifact",
          "Read a file",
          "Read one file of a session's workspace or of a run: text comes back as content,"
              + " anything else as content_base64. Symbolic links are never followed.",
          READ,
          List.of(
              Param.id("session_id", "Read from the session's workspace. Give this or run_id."),
              Param.id("run_id", "Read the file as the run left it."),
              Param.string("path", "Relative to /mnt/data, e.g. out/chart.png.").required(),
              Param.longInteger(
                      "max_size_bytes",
                      "Refuse a larger file (artifact_too_large); capped at the server's"
                          + " read_max_bytes (16 MiB unless configured).")
                  .min(1)
                  .defaultValue(DEFAULT_MAX_SIZE_BYTES)),
          ArtifactContent.class);
}

package dev.pysandbox.http.rest;

import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.FileStream;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.Operations;
import dev.pysandbox.http.rest.Route.Input;
import dev.pysandbox.http.rest.Route.Output;
import java.util.List;

/**
 * The file routes: list the files of a session or a run, download one (streamed, by descriptor, see
 * {@link Downloads}), and upload one into a session from a raw body or a multipart form, streamed
 * to the core ({@code SandboxService.uploadStream}) without holding it. A declared length over the
 * limit is refused before a byte is read; an undeclared one is cut off at the limit by the core.
 */
final class FileRoutes {
  private FileRoutes() {}

  static List<Route> all(long uploadMaxBytes) {
    return List.of(
        RestRoutes.route(
            "list_run_files",
            "GET",
            "/runs/{run_id}/files",
            RestRoutes.only(Operations.LIST_ARTIFACTS, "/runs/{run_id}/files", "run_id"),
            Input.QUERY,
            200,
            c -> c.service().listArtifacts(c.args().string("run_id"), null)),
        download("download_run_file", "/runs/{run_id}/files/{path}", "run_id"),
        RestRoutes.route(
            "list_session_files",
            "GET",
            "/sessions/{session_id}/files",
            RestRoutes.only(
                Operations.LIST_ARTIFACTS, "/sessions/{session_id}/files", "session_id"),
            Input.QUERY,
            200,
            c -> c.service().listArtifacts(null, c.args().string("session_id"))),
        download("download_session_file", "/sessions/{session_id}/files/{path}", "session_id"),
        new Route(
            "upload_file_body",
            "PUT",
            PathTemplate.of("/sessions/{session_id}/files/{path}"),
            RestOperations.upload(false),
            Input.RAW_FILE,
            Output.JSON,
            201,
            c -> {
              refuseDeclaredOver(
                  c.request().getContentLengthLong(), uploadMaxBytes, "upload_max_bytes");
              return uploaded(
                  c.service()
                      .uploadStream(
                          c.args().string("session_id"),
                          c.args().string("path"),
                          c.request().getInputStream(),
                          uploadMaxBytes,
                          c.args().bool("overwrite")));
            }),
        new Route(
            "upload_file_form",
            "POST",
            PathTemplate.of("/sessions/{session_id}/files"),
            RestOperations.upload(true),
            Input.MULTIPART_FILE,
            Output.JSON,
            201,
            c -> {
              refuseDeclaredOver(
                  c.request().getContentLengthLong(),
                  uploadMaxBytes + RestLimits.FORM_OVERHEAD_BYTES,
                  "upload_max_bytes + 64 KiB for the form");
              MultipartFile file =
                  MultipartFile.open(
                      c.request().getInputStream(),
                      c.request().getContentType(),
                      uploadMaxBytes + RestLimits.FORM_OVERHEAD_BYTES);
              return uploaded(
                  c.service()
                      .uploadStream(
                          c.args().string("session_id"),
                          file.filename(),
                          file,
                          uploadMaxBytes,
                          c.args().bool("overwrite")));
            }));
  }

  private static Route download(String id, String path, String idParam) {
    Operation op = RestOperations.download(idParam);
    return new Route(
        id,
        "GET",
        PathTemplate.of(path),
        op,
        Input.QUERY,
        Output.FILE,
        200,
        c -> {
          String ownerId = c.args().string(idParam);
          try (FileStream f =
              c.service()
                  .openArtifact(
                      idParam.equals("run_id") ? ownerId : null,
                      idParam.equals("session_id") ? ownerId : null,
                      c.args().string("path"))) {
            Downloads.send(c.request(), c.response(), f, c.request().getMethod().equals("HEAD"));
          }
          return null;
        });
  }

  /** A new file is 201 Created, a replaced one 200. */
  private static Route.Reply uploaded(UploadResult r) {
    return new Route.Reply(r.replaced() ? 200 : 201, r);
  }

  private static void refuseDeclaredOver(long declared, long max, String limit) {
    if (declared > max) {
      throw new PysandboxException(
          ErrorCode.PAYLOAD_TOO_LARGE,
          "the body is "
              + declared
              + " bytes (Content-Length), over "
              + max
              + " ("
              + limit
              + "); nothing was read");
    }
  }
}

package dev.pysandbox.http.rest;

import dev.pysandbox.api.RunEvent;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.UploadRequest;
import dev.pysandbox.api.UploadResult;
import dev.pysandbox.api.agent.AgentEvent;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.Operations;
import dev.pysandbox.api.op.Param;
import java.util.ArrayList;
import java.util.List;

/**
 * The declarations REST routes take their arguments by: an {@link Operations} declaration narrowed
 * to the arguments a route admits (the ones in its path made required), and the few calls only REST
 * makes (one session, a file's bytes down or up), whose arguments are those of the declarations
 * they stand beside. Nothing here declares a rule of its own.
 */
final class RestOperations {
  private RestOperations() {}

  /** One session, as list_sessions shows it. */
  static final Operation GET_SESSION =
      new Operation(
          "get_session",
          "Get a session",
          "One open session, as list_sessions shows it.",
          Operation.Effect.READ,
          List.of(param(Operations.CLOSE_SESSION, "session_id")),
          SessionInfo.class);

  /** One approval of the caller's tenant, with the code it would run. */
  static final Operation GET_APPROVAL =
      new Operation(
          "get_approval",
          "Get an approval",
          "One approval of the key's tenant: its run, why it waits, its findings, the code it"
              + " would run, and its decision once decided.",
          Operation.Effect.READ,
          List.of(param(Operations.APPROVE_RUN, "approval_id")),
          dev.pysandbox.api.Approval.class);

  /** A run's events as they happen (a stream), from the start or after one the client has. */
  static final Operation RUN_EVENTS =
      new Operation(
          "get_run_events",
          "Watch a run",
          "A run's events as they happen, one JSON object a line (Accept: application/x-ndjson,"
              + " the default) or as server-sent events (Accept: text/event-stream): started,"
              + " stdout, stderr, display, result, error, and done last with the run's record;"
              + " lagged when the client read too slowly and output was dropped. A finished run"
              + " is replayed. Resume with Last-Event-ID (or after).",
          Operation.Effect.READ,
          List.of(
              param(Operations.GET_RUN, "run_id"),
              Param.longInteger(
                      "after",
                      "Resume after this event (its seq, the SSE id); Last-Event-ID says the same.")
                  .min(0)),
          RunEvent.class);

  /**
   * An agent run's events as they happen (a stream), from the start or after one the client has.
   */
  static final Operation AGENT_RUN_EVENTS =
      new Operation(
          "get_agent_run_events",
          "Watch an agent run",
          "An agent run's events as they happen, one JSON object a line (Accept:"
              + " application/x-ndjson, the default) or as server-sent events (Accept:"
              + " text/event-stream): step (a step began or ended, with it), run (a code run"
              + " started, with its run_id), answer (the model's final text), and done last with"
              + " the agent run as it ended. A finished agent run is replayed. Resume with"
              + " Last-Event-ID (or after).",
          Operation.Effect.READ,
          List.of(
              param(Operations.AGENT_STATUS, "agent_run_id"),
              Param.longInteger(
                      "after",
                      "Resume after this event (its seq, the SSE id); Last-Event-ID says the same.")
                  .min(0)),
          AgentEvent.class);

  /** A file's bytes, of a session or of a run (read_artifact's arguments, any size). */
  static Operation download(String idParam) {
    return new Operation(
        "download_file",
        "Download a file",
        "A file of "
            + (idParam.equals("run_id")
                ? "a run, as the run left it"
                : "a session's workspace, as it is now")
            + ": its bytes, any size, with ETag (sha256) and byte ranges. Symbolic links are never"
            + " followed.",
        Operation.Effect.READ,
        List.of(
            param(Operations.READ_ARTIFACT, idParam).required(),
            param(Operations.READ_ARTIFACT, "path")),
        byte[].class);
  }

  /** A file written from a request body (upload_file's arguments, the content streamed). */
  static Operation upload(boolean form) {
    List<Param> params = new ArrayList<>();
    params.add(param(Operations.UPLOAD_FILE, "session_id"));
    if (!form) {
      Param filename = param(Operations.UPLOAD_FILE, "filename");
      params.add(
          Param.string("path", filename.description())
              .pattern(UploadRequest.FILENAME_REGEX)
              .required());
    }
    params.add(param(Operations.UPLOAD_FILE, "overwrite"));
    return new Operation(
        "upload_file",
        "Upload a file",
        "Write a file into a session's /mnt/data (the session is created if needed), streamed"
            + (form
                ? " from the part named file of a multipart form; its name is the part's filename."
                : " from the request body, any content type."),
        Operation.Effect.WRITE,
        params,
        UploadResult.class);
  }

  /**
   * {@code op} narrowed to the arguments named, those in {@code path} required.
   *
   * @param path the route's path variables
   */
  static Operation narrowed(Operation op, List<String> path, String... names) {
    List<Param> params = new ArrayList<>();
    for (String name : names) {
      Param p = param(op, name);
      params.add(path.contains(name) && !p.isRequired() ? p.required() : p);
    }
    return new Operation(op.name(), op.title(), op.description(), op.effect(), params, op.result());
  }

  private static Param param(Operation op, String name) {
    Param p = op.param(name);
    if (p == null) {
      throw new IllegalArgumentException(op.name() + " declares no " + name);
    }
    return p;
  }
}

package dev.pysandbox.http.rest;

import dev.pysandbox.api.SandboxService;
import dev.pysandbox.api.op.Arguments;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.Param;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;

/**
 * One REST route: a method and a path, the declared {@link Operation} whose arguments it takes
 * (from the path, and from the query or the body as {@link Input} says) and the handler that calls
 * the core. The OpenAPI document is written from the same records.
 *
 * @param id the OpenAPI operationId (unique; the declaration's name where one route has it)
 * @param status the status of a successful answer
 */
record Route(
    String id,
    String method,
    PathTemplate path,
    Operation op,
    Input input,
    Output output,
    int status,
    Handler handler) {

  /** Where the arguments that are not in the path come from. */
  enum Input {
    /** The query string. */
    QUERY,
    /** A JSON object whose members are the arguments (or an empty body). */
    JSON_FIELDS,
    /** A JSON object that is the value of the one argument {@code values}. */
    JSON_VALUES,
    /** The query string; the body is a file's bytes. */
    RAW_FILE,
    /** The query string; the body is a multipart form with one file part named {@code file}. */
    MULTIPART_FILE
  }

  /** What a successful answer is. */
  enum Output {
    /** The JSON of {@code op.result()}. */
    JSON,
    /**
     * The JSON of {@code op.result()}, or the run's events as a stream when the client's {@code
     * Accept} asks for one ({@link EventStream.Format}).
     */
    JSON_OR_EVENTS,
    /** A run's events, streamed ({@link EventStream}). */
    EVENTS,
    /** A file's bytes. */
    FILE,
    /** This API's OpenAPI document. */
    DOCUMENT
  }

  /** A call in progress: the caller's service, its parsed arguments, the exchange. */
  record Call(
      SandboxService service,
      Arguments args,
      HttpServletRequest request,
      HttpServletResponse response) {}

  /** An answer with a status other than the route's own. */
  record Reply(int status, Object body) {}

  @FunctionalInterface
  interface Handler {
    /**
     * @return the JSON value to answer with (or a {@link Reply}); {@code null} when the handler has
     *     answered itself
     */
    Object handle(Call call) throws IOException;
  }

  /** The parameters that are not in the path. */
  List<Param> otherParams() {
    List<String> vars = path.variables();
    return op.params().stream().filter(p -> !vars.contains(p.name())).toList();
  }
}

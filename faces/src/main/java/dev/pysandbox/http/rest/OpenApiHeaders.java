package dev.pysandbox.http.rest;

import static dev.pysandbox.http.rest.OpenApiDocument.map;

import java.util.List;
import java.util.Map;

/**
 * The request headers the OpenAPI document declares for a route: those its handler reads (a
 * download's {@code Range}, {@code If-Range} and {@code If-None-Match}; an event stream's {@code
 * Last-Event-ID}), so that a generated client can send them.
 */
final class OpenApiHeaders {
  private OpenApiHeaders() {}

  /** The request headers a route reads: a download's conditions and range, a stream's resume. */
  static List<Map<String, Object>> of(Route r) {
    return switch (r.output()) {
      case FILE ->
          List.of(
              headerParameter(
                  "Range",
                  "One byte range, bytes=first-last, bytes=first- or bytes=-suffix: answered 206"
                      + " with that part (416 when it is outside the file); more than one range"
                      + " is answered with the whole file."),
              headerParameter(
                  "If-Range", "An ETag: the Range applies only while the file still has it."),
              headerParameter(
                  "If-None-Match",
                  "ETags (or *): answered 304 without the file while it still has one of them."));
      case EVENTS ->
          List.of(
              headerParameter(
                  "Last-Event-ID",
                  "The seq of the last event the client has (an SSE client sends it when it"
                      + " reconnects): the stream resumes after it. The query's after says the"
                      + " same and wins."));
      default -> List.of();
    };
  }

  private static Map<String, Object> headerParameter(String name, String description) {
    return map(
        "name",
        name,
        "in",
        "header",
        "required",
        false,
        "description",
        description,
        "schema",
        map("type", "string"));
  }
}

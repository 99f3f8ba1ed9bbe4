package dev.pysandbox.http.rest;

import dev.pysandbox.api.Version;
import dev.pysandbox.api.agent.AgentEvent;
import dev.pysandbox.api.op.InputSchema;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.Param;
import dev.pysandbox.api.op.ResultSchema;
import dev.pysandbox.http.rest.Route.Input;
import dev.pysandbox.http.rest.Route.Output;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The OpenAPI 3.1 document of {@code /api/v1}, written from the route table: each route's
 * parameters and request body from its operation's declared arguments ({@link
 * InputSchema#of(Param)} for each), its answer from the result record ({@link ResultSchema}), every
 * error as {@link dev.pysandbox.http.ErrorBodies}' shape. Nothing in it is written by hand but the
 * prose.
 */
final class OpenApiDocument {
  private OpenApiDocument() {}

  static final Operation GET_OPENAPI =
      new Operation(
          "get_openapi",
          "Describe this API",
          "This OpenAPI 3.1 document, generated from the operations' declarations; it needs no"
              + " key.",
          Operation.Effect.READ,
          List.of(),
          Map.class);

  /** The route that serves the document {@code document} gives. */
  static Route route(Supplier<Map<String, Object>> document) {
    return new Route(
        "get_openapi",
        "GET",
        PathTemplate.of("/openapi.json"),
        GET_OPENAPI,
        Input.QUERY,
        Output.DOCUMENT,
        200,
        c -> document.get());
  }

  static Map<String, Object> of(List<Route> routes) {
    Map<String, Object> schemas = new TreeMap<>();
    schemas.put("Error", errorSchema());
    Map<String, Map<String, Object>> paths = new LinkedHashMap<>();
    for (Route r : routes) {
      paths
          .computeIfAbsent(r.path().text(), k -> new LinkedHashMap<>())
          .put(r.method().toLowerCase(Locale.ROOT), operation(r, schemas));
    }
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("openapi", "3.1.0");
    doc.put(
        "info",
        map(
            "title",
            "pysandbox REST API",
            "version",
            Version.VALUE,
            "description",
            "Runs Python in isolated sandboxes and records every run. The same operations as"
                + " the MCP tools, with the same arguments and the same JSON answers;"
                + " files go up and down as bytes. Send the key as Authorization: Bearer KEY or"
                + " X-API-Key: KEY."));
    doc.put("servers", List.of(map("url", "/api/v1")));
    // Either scheme (one key, sent either way).
    doc.put("security", List.of(map("bearer", List.of()), map("apiKey", List.of())));
    doc.put("paths", paths);
    doc.put(
        "components",
        map(
            "securitySchemes",
                map(
                    "bearer",
                    map(
                        "type",
                        "http",
                        "scheme",
                        "bearer",
                        "description",
                        "An API key (pysandbox keys create) as Authorization: Bearer KEY."),
                    "apiKey",
                    map(
                        "type",
                        "apiKey",
                        "in",
                        "header",
                        "name",
                        "X-API-Key",
                        "description",
                        "The same API key, as X-API-Key: KEY.")),
            "schemas", schemas,
            "responses",
                map(
                    "Error",
                    map(
                        "description",
                        "An error: its code, a message that says what to change, and whether"
                            + " the same call may succeed later.",
                        "content",
                        json(ref("Error"))))));
    return doc;
  }

  private static Map<String, Object> operation(Route r, Map<String, Object> schemas) {
    Operation op = r.op();
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("operationId", r.id());
    o.put("summary", op.title());
    o.put("description", op.description());
    o.put("tags", List.of(tag(r)));
    o.put("x-pysandbox-operation", op.name());
    List<Object> parameters = new ArrayList<>();
    for (String name : r.path().variables()) {
      Param p = op.param(name);
      String more =
          name.equals(PathTemplate.REST)
              ? " A path below the workspace, e.g. data/in.csv: its '/' may be sent as they are"
                  + " or percent-encoded as %2F (as a client encodes a path parameter); each"
                  + " part is percent-decoded once, and '..', absolute paths and NUL are refused."
              : "";
      parameters.add(parameter(p, "path", more));
    }
    boolean queryInput = r.input() != Input.JSON_FIELDS && r.input() != Input.JSON_VALUES;
    if (queryInput) {
      r.otherParams().forEach(p -> parameters.add(parameter(p, "query", "")));
    }
    parameters.addAll(OpenApiHeaders.of(r));
    if (!parameters.isEmpty()) {
      o.put("parameters", parameters);
    }
    Map<String, Object> body = requestBody(r);
    if (body != null) {
      o.put("requestBody", body);
    }
    o.put("responses", responses(r, schemas));
    if (r.output() == Output.DOCUMENT) {
      o.put("security", List.of());
    }
    return o;
  }

  private static Map<String, Object> parameter(Param p, String in, String more) {
    Map<String, Object> schema = new LinkedHashMap<>(InputSchema.of(p));
    schema.remove("description");
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("name", p.name());
    out.put("in", in);
    out.put("required", in.equals("path") || p.isRequired());
    out.put("description", p.description() + more);
    if (p.kind() == Param.Kind.STRING_LIST) {
      out.put("style", "form");
      out.put("explode", false);
    }
    out.put("schema", schema);
    return out;
  }

  private static Map<String, Object> requestBody(Route r) {
    return switch (r.input()) {
      case QUERY -> null;
      case JSON_FIELDS -> {
        List<Param> params = r.otherParams();
        if (params.isEmpty()) {
          yield null;
        }
        boolean anyRequired = params.stream().anyMatch(Param::isRequired);
        yield map("required", anyRequired, "content", json(InputSchema.object(params)));
      }
      case JSON_VALUES ->
          map("required", true, "content", json(InputSchema.of(r.op().param("values"))));
      case RAW_FILE ->
          map(
              "required",
              true,
              "description",
              "The file's bytes, any Content-Type; at most upload_max_bytes (a larger declared"
                  + " Content-Length is refused before it is read).",
              "content",
              map("*/*", map("schema", binary())));
      case MULTIPART_FILE ->
          map(
              "required",
              true,
              "content",
              map(
                  "multipart/form-data",
                  map(
                      "schema",
                      map(
                          "type", "object",
                          "properties", map(MultipartFile.PART, binary()),
                          "required", List.of(MultipartFile.PART)))));
    };
  }

  private static Map<String, Object> responses(Route r, Map<String, Object> schemas) {
    Map<String, Object> out = new LinkedHashMap<>();
    switch (r.output()) {
      case JSON, JSON_OR_EVENTS -> {
        String name = r.op().result().getSimpleName();
        schemas.putIfAbsent(name, ResultSchema.of(r.op().result()));
        Map<String, Object> ok =
            map("description", r.op().title() + ": the result", "content", json(ref(name)));
        if (r.input() == Input.RAW_FILE || r.input() == Input.MULTIPART_FILE) {
          out.put(
              "200",
              map(
                  "description",
                  "The file replaced one of the same name.",
                  "content",
                  json(ref(name))));
          out.put("201", map("description", "The file was created.", "content", json(ref(name))));
        } else if (r.status() == 201) {
          ok.put(
              "headers",
              map(
                  "Location",
                  map("description", "Where it is read again.", "schema", map("type", "string"))));
          out.put("201", ok);
          if (r.output() == Output.JSON_OR_EVENTS) {
            out.put(
                "200",
                map(
                    "description",
                    "Accept: application/x-ndjson or text/event-stream: the run's events as they"
                        + " happen, done last with the fields of the 201 answer.",
                    "content",
                    events()));
            out.put(
                "202",
                map(
                    "description",
                    "async_mode: the run as it began (status running); it goes on.",
                    "content",
                    json(ref(name))));
          }
        } else {
          out.put(Integer.toString(r.status()), ok);
        }
      }
      case FILE -> {
        Map<String, Object> headers =
            map(
                "ETag", header("The sha256 of the content, quoted."),
                "Content-Disposition", header("attachment, with the file's name."),
                "Last-Modified", header("The file's modification time."));
        out.put(
            "200",
            map(
                "description",
                "The file's bytes.",
                "headers",
                headers,
                "content",
                map("*/*", map("schema", binary()))));
        out.put(
            "206",
            map(
                "description",
                "The byte range asked for (Range: bytes=a-b).",
                "headers",
                map("Content-Range", header("bytes a-b/size")),
                "content",
                map("*/*", map("schema", binary()))));
        out.put("304", map("description", "If-None-Match named the current ETag."));
        out.put("416", map("$ref", "#/components/responses/Error"));
      }
      case EVENTS -> {
        out.put(
            "200",
            map("description", r.op().title() + ": the events, done last.", "content", events(r)));
        out.put(
            "204",
            map(
                "description",
                "It is over and the client has every event of it, done included (after"
                    + " Last-Event-ID or after): nothing to stream, and an EventSource stops"
                    + " reconnecting."));
      }
      case DOCUMENT ->
          out.put(
              "200", map("description", "This document.", "content", json(map("type", "object"))));
      default -> throw new IllegalStateException(r.output().toString());
    }
    out.put("4XX", map("$ref", "#/components/responses/Error"));
    out.put("5XX", map("$ref", "#/components/responses/Error"));
    return out;
  }

  private static String tag(Route r) {
    String first = r.path().text().substring(1).split("/")[0];
    return r.output() == Output.FILE || r.path().text().contains("/files")
        ? "files"
        : first.endsWith(".json") ? "meta" : first;
  }

  private static Map<String, Object> errorSchema() {
    return map(
        "type", "object",
        "properties",
            map(
                "error",
                map(
                    "type", "object",
                    "properties",
                        map(
                            "code",
                                map(
                                    "type",
                                    "string",
                                    "description",
                                    "One of the closed set of codes, e.g. invalid_argument."),
                            "message", map("type", "string"),
                            "retryable", map("type", "boolean")),
                    "required", List.of("code", "message", "retryable"))),
        "required", List.of("error"));
  }

  /** One event of a run, as a line of NDJSON or the data of a server-sent event. */
  private static Map<String, Object> events() {
    return events(
        "type and seq, then the event's fields: started (run_id, session_id), stdout and"
            + " stderr (text), display and result (data: a MIME bundle), error (name, value,"
            + " traceback), lagged (skipped_bytes), done (the run record's fields).",
        List.of("started", "stdout", "stderr", "display", "result", "error", "lagged", "done"));
  }

  /** The events a streaming route sends: an agent run's, or a run's. */
  private static Map<String, Object> events(Route r) {
    if (r.op().result() != AgentEvent.class) {
      return events();
    }
    return events(
        "type and seq, then the event's fields: step (step: the step as agent_status shows it;"
            + " one when a step begins and one when it ends), run (run_id: a code run started),"
            + " answer (answer: the model's final text), done (run: the agent run as it ended).",
        List.of("step", "run", "answer", "done"));
  }

  private static Map<String, Object> events(String description, List<String> types) {
    Map<String, Object> event =
        map(
            "type",
            "object",
            "description",
            description,
            "properties",
            map(
                "type",
                map("type", "string", "enum", types),
                "seq",
                map("type", "integer", "minimum", 1)),
            "required",
            List.of("type", "seq"));
    return map(
        "application/x-ndjson", map("schema", event), "text/event-stream", map("schema", event));
  }

  private static Map<String, Object> binary() {
    return map("type", "string", "contentMediaType", "application/octet-stream");
  }

  private static Map<String, Object> header(String description) {
    return map("description", description, "schema", map("type", "string"));
  }

  private static Map<String, Object> json(Object schema) {
    return map("application/json", map("schema", schema));
  }

  private static Map<String, Object> ref(String schema) {
    return map("$ref", "#/components/schemas/" + schema);
  }

  /** An ordered map of key, value, key, value... */
  static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }
}

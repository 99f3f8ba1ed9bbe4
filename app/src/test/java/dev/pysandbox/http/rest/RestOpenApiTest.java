package dev.pysandbox.http.rest;

import static dev.pysandbox.http.rest.RestTestServer.JSON;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Fast;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.op.InputSchema;
import dev.pysandbox.api.op.Operation;
import dev.pysandbox.api.op.Operations;
import dev.pysandbox.api.op.Param;
import dev.pysandbox.api.op.ResultSchema;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code GET /api/v1/openapi.json} over real HTTP, with no core behind the servlet (nothing here
 * reaches a service): the document is OpenAPI 3.1, names every route of the table and nothing else,
 * and its parameters, bodies and answers are the declarations' own schemas.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Fast
class RestOpenApiTest {
  static RestServlet servlet;
  static RestTestServer http;
  static JsonNode doc;

  @BeforeAll
  static void start() throws Exception {
    servlet =
        new RestServlet(
            tenant -> {
              throw new AssertionError("the document needs no service");
            },
            1 << 20,
            100_000,
            20_000);
    http = RestTestServer.start(servlet);
    HttpResponse<String> r =
        http.client.send(
            HttpRequest.newBuilder(http.uri("/openapi.json")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
    doc = JSON.readTree(r.body());
  }

  @AfterAll
  static void stop() {
    http.close();
  }

  /**
   * {@code value} as the document carries it: through JSON text, so that a declared long (a token
   * budget's maximum) and the int a parser reads back are the same number.
   */
  static JsonNode tree(Object value) {
    try {
      return JSON.readTree(JSON.writeValueAsString(value));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void document_isOpenApi31_andNamesEveryRoute_andNothingElse() {
    assertThat(doc.path("openapi").asText()).isEqualTo("3.1.0");
    assertThat(doc.path("info").path("title").asText()).isNotBlank();
    assertThat(doc.path("servers").get(0).path("url").asText()).isEqualTo("/api/v1");
    Set<String> documented = new HashSet<>();
    doc.path("paths")
        .properties()
        .forEach(
            p ->
                p.getValue()
                    .fieldNames()
                    .forEachRemaining(
                        m -> documented.add(m.toUpperCase(Locale.ROOT) + " " + p.getKey())));
    Set<String> routed = new HashSet<>();
    Set<String> ids = new HashSet<>();
    for (Route r : servlet.routes()) {
      routed.add(r.method() + " " + r.path().text());
      JsonNode op =
          doc.path("paths").path(r.path().text()).path(r.method().toLowerCase(Locale.ROOT));
      assertThat(op.path("operationId").asText()).as(r.id()).isEqualTo(r.id());
      assertThat(op.path("x-pysandbox-operation").asText()).isEqualTo(r.op().name());
      assertThat(op.path("responses").has("4XX")).isTrue();
      assertThat(ids.add(r.id())).as("operationId " + r.id() + " is unique").isTrue();
    }
    assertThat(documented).isEqualTo(routed);
    assertThat(routed)
        .contains(
            "POST /runs",
            "GET /runs",
            "GET /runs/{run_id}",
            "GET /runs/{run_id}/outputs",
            "POST /runs/{run_id}/cancel",
            "GET /runs/{run_id}/files/{path}",
            "POST /sessions",
            "GET /sessions",
            "GET /sessions/{session_id}",
            "DELETE /sessions/{session_id}",
            "GET /sessions/{session_id}/context",
            "PUT /sessions/{session_id}/context",
            "DELETE /sessions/{session_id}/context",
            "GET /sessions/{session_id}/files",
            "POST /sessions/{session_id}/files",
            "GET /sessions/{session_id}/files/{path}",
            "PUT /sessions/{session_id}/files/{path}",
            "GET /setup",
            "POST /agent-runs",
            "GET /agent-runs",
            "GET /agent-runs/{agent_run_id}",
            "POST /agent-runs/{agent_run_id}/cancel",
            "GET /agent-runs/{agent_run_id}/events",
            "GET /openapi.json");
  }

  @Test
  void everyDeclaredOperation_hasARoute_readArtifactsBeingTheDownload() {
    Set<String> bound = new HashSet<>();
    servlet.routes().forEach(r -> bound.add(r.op().name()));
    for (Operation op : Operations.ALL) {
      if (op == Operations.READ_ARTIFACT) {
        assertThat(bound).contains("download_file");
      } else {
        assertThat(bound).as(op.name()).contains(op.name());
      }
    }
  }

  @Test
  void parametersAndBodies_areTheDeclaredArgumentsSchemas() {
    for (Route r : servlet.routes()) {
      JsonNode op =
          doc.path("paths").path(r.path().text()).path(r.method().toLowerCase(Locale.ROOT));
      Map<String, JsonNode> params = new LinkedHashMap<>();
      op.path("parameters")
          .forEach(p -> params.put(p.path("in").asText() + ":" + p.path("name").asText(), p));
      for (String v : r.path().variables()) {
        assertThat(params).as(r.id() + " path " + v).containsKey("path:" + v);
        assertThat(params.get("path:" + v).path("required").asBoolean()).isTrue();
      }
      for (Param p : r.otherParams()) {
        Map<String, Object> expected = new LinkedHashMap<>(InputSchema.of(p));
        switch (r.input()) {
          case QUERY, RAW_FILE, MULTIPART_FILE -> {
            expected.remove("description");
            JsonNode q = params.get("query:" + p.name());
            assertThat(q).as(r.id() + " query " + p.name()).isNotNull();
            assertThat(q.path("schema")).isEqualTo(tree(expected));
            assertThat(q.path("required").asBoolean()).isEqualTo(p.isRequired());
          }
          case JSON_FIELDS ->
              assertThat(
                      op.path("requestBody")
                          .path("content")
                          .path("application/json")
                          .path("schema")
                          .path("properties")
                          .path(p.name()))
                  .as(r.id() + " body " + p.name())
                  .isEqualTo(tree(expected));
          case JSON_VALUES ->
              assertThat(
                      op.path("requestBody")
                          .path("content")
                          .path("application/json")
                          .path("schema"))
                  .isEqualTo(tree(expected));
          default -> throw new AssertionError(r.input());
        }
      }
    }
    JsonNode run = doc.path("paths").path("/runs").path("post");
    assertThat(
            run.path("requestBody")
                .path("content")
                .path("application/json")
                .path("schema")
                .path("required")
                .toString())
        .isEqualTo("[\"code\"]");
    JsonNode upload = doc.path("paths").path("/sessions/{session_id}/files").path("post");
    assertThat(upload.path("requestBody").path("content").has("multipart/form-data")).isTrue();
  }

  @Test
  void answers_areTheResultRecordsSchemas_andEveryReferenceResolves() {
    JsonNode created = doc.path("paths").path("/runs").path("post").path("responses").path("201");
    assertThat(
            created.path("content").path("application/json").path("schema").path("$ref").asText())
        .isEqualTo("#/components/schemas/RunRecord");
    assertThat(doc.path("components").path("schemas").path("RunRecord"))
        .isEqualTo(tree(ResultSchema.of(RunRecord.class)));
    JsonNode download =
        doc.path("paths").path("/runs/{run_id}/files/{path}").path("get").path("responses");
    assertThat(List.of("200", "206", "304", "416")).allMatch(download::has);
    checkRefs(doc);
  }

  /**
   * The document as an OpenAPI parser reads it, with the specification's rules checked: nothing it
   * reports, and it finds every path and both security schemes.
   */
  @Test
  void document_isValidOpenApi31_asAParserReadsIt() throws Exception {
    io.swagger.v3.parser.core.models.ParseOptions options =
        new io.swagger.v3.parser.core.models.ParseOptions();
    options.setValidateInternalRefs(true);
    io.swagger.v3.parser.core.models.SwaggerParseResult parsed =
        new io.swagger.v3.parser.OpenAPIV3Parser()
            .readContents(JSON.writeValueAsString(doc), null, options);
    assertThat(parsed.getMessages()).as("what the parser says of the document").isEmpty();
    io.swagger.v3.oas.models.OpenAPI api = parsed.getOpenAPI();
    assertThat(api.getOpenapi()).isEqualTo("3.1.0");
    assertThat(api.getPaths()).hasSameSizeAs(doc.path("paths").properties());
    assertThat(api.getComponents().getSecuritySchemes()).containsOnlyKeys("bearer", "apiKey");
  }

  /**
   * Regression: the document did not declare the X-API-Key scheme, the 204 of a stream with nothing
   * left, nor the headers the routes read (Range, If-None-Match, Last-Event-ID), and it did not say
   * how a file path under folders is sent.
   */
  @Test
  void document_declaresBothKeySchemes_204_theHeadersRead_andFilePathsUnderFolders() {
    JsonNode schemes = doc.path("components").path("securitySchemes");
    assertThat(schemes.path("apiKey").path("type").asText()).isEqualTo("apiKey");
    assertThat(schemes.path("apiKey").path("in").asText()).isEqualTo("header");
    assertThat(schemes.path("apiKey").path("name").asText()).isEqualTo("X-API-Key");
    assertThat(schemes.path("bearer").path("scheme").asText()).isEqualTo("bearer");
    assertThat(doc.path("security").toString())
        .as("either scheme")
        .isEqualTo("[{\"bearer\":[]},{\"apiKey\":[]}]");

    JsonNode events = doc.path("paths").path("/runs/{run_id}/events").path("get");
    assertThat(events.path("responses").has("204")).isTrue();
    assertThat(headersOf(events)).contains("Last-Event-ID");
    for (String download :
        List.of("/runs/{run_id}/files/{path}", "/sessions/{session_id}/files/{path}")) {
      JsonNode get = doc.path("paths").path(download).path("get");
      assertThat(headersOf(get)).as(download).contains("Range", "If-None-Match", "If-Range");
      JsonNode path = null;
      for (JsonNode p : get.path("parameters")) {
        if (p.path("name").asText().equals("path")) {
          path = p;
        }
      }
      assertThat(path).isNotNull();
      assertThat(path.path("description").asText()).contains("%2F").contains("'..'");
    }
    assertThat(headersOf(doc.path("paths").path("/sessions/{session_id}/files/{path}").path("put")))
        .isEmpty();
  }

  private static List<String> headersOf(JsonNode operation) {
    List<String> names = new java.util.ArrayList<>();
    for (JsonNode p : operation.path("parameters")) {
      if (p.path("in").asText().equals("header")) {
        names.add(p.path("name").asText());
      }
    }
    return names;
  }

  private static void checkRefs(JsonNode node) {
    if (node.isObject()) {
      JsonNode ref = node.get("$ref");
      if (ref != null) {
        String[] parts = ref.asText().substring(2).split("/");
        JsonNode target = doc;
        for (String part : parts) {
          target = target.path(part);
        }
        assertThat(target.isMissingNode()).as(ref.asText()).isFalse();
      }
      node.elements().forEachRemaining(RestOpenApiTest::checkRefs);
    } else if (node.isArray()) {
      node.elements().forEachRemaining(RestOpenApiTest::checkRefs);
    }
  }
}

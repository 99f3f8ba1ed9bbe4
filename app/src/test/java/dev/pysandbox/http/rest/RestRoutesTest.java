package dev.pysandbox.http.rest;

import static dev.pysandbox.http.rest.RestTestServer.JSON;
import static dev.pysandbox.http.rest.RestTestServer.tree;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Await;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.op.ResultSchema;
import dev.pysandbox.config.PysandboxConfig;
import dev.pysandbox.core.DefaultSandboxService;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every JSON route of {@code /api/v1} over real HTTP (Jetty, java.net.http) against the real core:
 * the happy path of each, the answers being the JSON of the same api records MCP sends, and the
 * error answers (404, 405, 415, 413, 401, 400) in the one error shape.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class RestRoutesTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;
  static RestTestServer http;

  @BeforeAll
  static void start() throws Exception {
    Map<String, String> settings =
        Map.of("code_max_bytes", "1000", "result_output_limit", "2048", "max_sessions", "20");
    PysandboxConfig config = TestServices.config(dataDir, settings);
    service = TestServices.start(dataDir, settings);
    http = RestTestServer.start(RestServlet.of(service, config));
  }

  @AfterAll
  static void stop() throws Exception {
    http.close();
    service.close();
  }

  static void assertError(HttpResponse<String> r, int status, String code) throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/json"));
    JsonNode e = tree(r).path("error");
    assertThat(e.path("code").asText()).as(r.body()).isEqualTo(code);
    assertThat(e.path("message").asText()).isNotBlank();
    assertThat(e.has("retryable")).isTrue();
    assertThat(tree(r).size()).as("nothing but the error").isEqualTo(1);
  }

  @Test
  void postRuns_runsTheCode_answers201WithTheRunRecordAndItsLocation() throws Exception {
    HttpResponse<String> r = http.json("POST", "/runs", "{\"code\": \"x = 20\\nx + 22\"}");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    JsonNode run = tree(r);
    String id = run.path("run_id").asText();
    assertThat(run.path("status").asText()).isEqualTo("succeeded");
    assertThat(run.path("result").path("text/plain").asText()).isEqualTo("42");
    assertThat(r.headers().firstValue("Location")).hasValue("/api/v1/runs/" + id);
    List<String> names = new ArrayList<>();
    run.fieldNames().forEachRemaining(names::add);
    @SuppressWarnings("unchecked")
    List<String> required = (List<String>) ResultSchema.of(RunRecord.class).get("required");
    assertThat(names).as("the fields MCP's run_python sends").containsAll(required);

    HttpResponse<String> got = http.get("/runs/" + id);
    assertThat(got.statusCode()).isEqualTo(200);
    assertThat(tree(got))
        .as("GET /runs/{id} is the JSON of the same record, by the same serializer")
        .isEqualTo(JSON.readTree(Json.write(service.getRun(id, true))));
    assertThat(tree(http.get("/runs/" + id + "?include_code=false")).path("code").isNull())
        .isTrue();
  }

  @Test
  void postValidate_answersTheReport_andRecordsNothing() throws Exception {
    long before = tree(http.get("/runs?limit=1")).path("total").asLong();
    HttpResponse<String> r =
        http.json("POST", "/validate", "{\"code\": \"import os\\nos.system('id')\"}");

    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.headers().firstValue("Location")).isEmpty();
    JsonNode report = tree(r);
    assertThat(report.path("valid").asBoolean()).isTrue();
    assertThat(report.path("max_severity").asText()).isEqualTo("critical");
    assertThat(report.at("/risk_findings/0/line").asInt()).isEqualTo(2);
    assertThat(tree(http.get("/runs?limit=1")).path("total").asLong()).isEqualTo(before);
    assertError(http.json("POST", "/validate", "{}"), 400, "invalid_argument");
    assertError(
        http.json("POST", "/validate", "{\"code\": \"" + "x".repeat(1001) + "\"}"),
        413,
        "code_too_large");
  }

  @Test
  void postRuns_dryRun_answers200WithoutLocation_evenWhenEventsAreAsked_andRecordsNothing()
      throws Exception {
    long before = tree(http.get("/runs?limit=1")).path("total").asLong();
    String body = "{\"code\": \"print(1)\\nreturn 2\", \"dry_run\": true}";
    HttpResponse<String> r = http.json("POST", "/runs", body);
    HttpResponse<String> streamed =
        http.send(
            http.request("/runs")
                .header("Content-Type", "application/json")
                .header("Accept", "application/x-ndjson")
                .POST(HttpRequest.BodyPublishers.ofString(body)));

    for (HttpResponse<String> answer : List.of(r, streamed)) {
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("Location")).isEmpty();
      JsonNode run = tree(answer);
      assertThat(run.path("status").asText()).isEqualTo("dry_run");
      assertThat(run.path("run_id").isNull()).isTrue();
      assertThat(run.at("/error/name").asText()).isEqualTo("SyntaxError");
    }
    assertThat(tree(http.get("/runs?limit=1")).path("total").asLong()).isEqualTo(before);
  }

  @Test
  void postRuns_capsTheAnswersOutput_whileGetRunHasTheRecord() throws Exception {
    JsonNode run = tree(http.json("POST", "/runs", "{\"code\": \"print('y' * 10000)\"}"));
    assertThat(run.path("stdout_truncated").asBoolean()).isTrue();
    assertThat(run.path("stdout_omitted_bytes").asLong()).isGreaterThan(7000);
    JsonNode full = tree(http.get("/runs/" + run.path("run_id").asText()));
    assertThat(full.path("stdout").asText()).hasSize(10001);
  }

  @Test
  void runsInASession_areListedByQuery_andTheirOutputsRead() throws Exception {
    JsonNode run =
        tree(
            http.json(
                "POST",
                "/runs",
                "{\"code\": \"__outputs__['n'] = 7\", \"session_id\": \"rs-list\","
                    + " \"description\": \"outputs\", \"timeout_seconds\": 30}"));
    String id = run.path("run_id").asText();
    JsonNode page = tree(http.get("/runs?session_id=rs-list&limit=5&offset=0&status=succeeded"));
    assertThat(page.path("total").asInt()).isEqualTo(1);
    assertThat(page.path("runs").get(0).path("run_id").asText()).isEqualTo(id);
    JsonNode outputs = tree(http.get("/runs/" + id + "/outputs"));
    assertThat(outputs.path("outputs").path("n").asInt()).isEqualTo(7);
    assertThat(outputs.path("run_id").asText()).isEqualTo(id);
    JsonNode files = tree(http.get("/runs/" + id + "/files"));
    assertThat(files.path("run_id").asText()).isEqualTo(id);
    JsonNode cancel = tree(http.json("POST", "/runs/" + id + "/cancel", null));
    assertThat(cancel.path("cancelled").asBoolean()).isFalse();
    assertThat(cancel.path("status").asText()).isEqualTo("succeeded");
  }

  @Test
  void cancel_stopsARunThatIsRunning() throws Exception {
    CompletableFuture<HttpResponse<String>> running =
        http.client.sendAsync(
            http.request("/runs")
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"code\": \"import time\\ntime.sleep(60)\", \"session_id\": \"rs-cancel\"}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    String id =
        Await.untilChecked(
                "the run shows as running",
                () -> tree(http.get("/runs?session_id=rs-cancel&status=running")).path("runs"),
                runs -> runs.size() > 0)
            .get(0)
            .path("run_id")
            .asText();
    JsonNode cancel = tree(http.json("POST", "/runs/" + id + "/cancel", ""));
    assertThat(cancel.path("cancelled").asBoolean()).isTrue();
    HttpResponse<String> ran = running.get(60, TimeUnit.SECONDS);
    assertThat(ran.statusCode()).isEqualTo(201);
    assertThat(tree(ran).path("status").asText()).isEqualTo("cancelled");
  }

  @Test
  void sessions_createListGetContextAndClose() throws Exception {
    HttpResponse<String> created =
        http.json("POST", "/sessions", "{\"session_id\": \"rs-sess\", \"ttl_minutes\": 5}");
    assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
    assertThat(tree(created).path("ttl_minutes").asInt()).isEqualTo(5);
    List<String> ids = new ArrayList<>();
    tree(http.get("/sessions"))
        .path("sessions")
        .forEach(s -> ids.add(s.path("session_id").asText()));
    assertThat(ids).contains("rs-sess");
    assertThat(tree(http.get("/sessions/rs-sess")).path("session_id").asText())
        .isEqualTo("rs-sess");

    JsonNode set = tree(http.json("PUT", "/sessions/rs-sess/context", "{\"a\": 1, \"b\": \"x\"}"));
    assertThat(set.path("variables").path("a").path("value").asInt()).isEqualTo(1);
    JsonNode got = tree(http.get("/sessions/rs-sess/context?names=a,zz&names=b"));
    assertThat(got.path("variables").path("b").path("value").asText()).isEqualTo("x");
    assertThat(got.path("missing").toString()).isEqualTo("[\"zz\"]");
    HttpResponse<String> cleared = http.send(http.request("/sessions/rs-sess/context").DELETE());
    assertThat(cleared.statusCode()).isEqualTo(200);
    assertThat(tree(http.get("/sessions/rs-sess/context?names=a")).path("missing").toString())
        .isEqualTo("[\"a\"]");
    assertThat(tree(http.get("/sessions/rs-sess/files")).path("session_id").asText())
        .isEqualTo("rs-sess");

    HttpResponse<String> closed = http.send(http.request("/sessions/rs-sess").DELETE());
    assertThat(closed.statusCode()).isEqualTo(200);
    assertThat(tree(closed).path("state").asText()).isEqualTo("closed");
    assertError(http.get("/sessions/rs-sess"), 410, "session_closed");
    assertError(http.get("/sessions/never-made"), 404, "not_found");
  }

  @Test
  void setup_answersCheckSetup() throws Exception {
    HttpResponse<String> r = http.get("/setup");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(tree(r).path("ready").asBoolean()).isTrue();
  }

  @Test
  void unknownRoute_is404_andWrongMethod_is405WithAllow() throws Exception {
    assertError(http.get("/nope"), 404, "not_found");
    assertError(http.get("/runs/"), 404, "not_found");
    HttpResponse<String> r = http.send(http.request("/runs").DELETE());
    assertError(r, 405, "method_not_allowed");
    assertThat(r.headers().firstValue("Allow")).hasValue("GET, HEAD, POST");
    HttpResponse<String> put = http.json("PUT", "/runs/run_0/cancel", "{}");
    assertError(put, 405, "method_not_allowed");
    assertThat(put.headers().firstValue("Allow")).hasValue("POST");
  }

  @Test
  void jsonBodies_areCheckedForTypeSizeAndShape() throws Exception {
    HttpResponse<String> text =
        http.send(
            http.request("/runs")
                .header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString("print(1)")));
    assertError(text, 415, "unsupported_media_type");
    HttpResponse<String> none =
        http.send(http.request("/runs").POST(HttpRequest.BodyPublishers.ofString("{}")));
    assertError(none, 415, "unsupported_media_type");
    assertError(http.json("POST", "/runs", "{\"code\": "), 400, "invalid_argument");
    assertThat(
            tree(http.json("POST", "/runs", "{\"code\": ")).path("error").path("message").asText())
        .contains("not valid JSON");
    assertError(http.json("POST", "/runs", "[1]"), 400, "invalid_argument");
    assertError(http.json("POST", "/runs", "{\"code\": \"1\"} {}"), 400, "invalid_argument");
    HttpResponse<String> twice = http.json("POST", "/runs", "{\"code\": \"1\", \"code\": \"2\"}");
    assertError(twice, 400, "invalid_argument");
    HttpResponse<String> kind = http.json("POST", "/runs", "{\"code\": 5}");
    assertError(kind, 400, "invalid_argument");
    assertThat(tree(kind).path("error").path("message").asText())
        .isEqualTo("run_python: argument 'code' must be a string, got a number");
    HttpResponse<String> unknown = http.json("POST", "/runs", "{\"code\": \"1\", \"cwd\": \"/\"}");
    assertThat(tree(unknown).path("error").path("message").asText())
        .contains("unknown argument 'cwd'");
    assertError(http.json("POST", "/runs", "{}"), 400, "invalid_argument");
    assertError(http.json("POST", "/runs?code=1", "{\"code\": \"1\"}"), 400, "invalid_argument");
    HttpResponse<String> big =
        http.json("POST", "/runs", "{\"code\": \"" + "#".repeat(1_100_000) + "\"}");
    assertError(big, 413, "payload_too_large");
    HttpResponse<String> code =
        http.json("POST", "/runs", "{\"code\": \"" + "#".repeat(2000) + "\"}");
    assertError(code, 413, "code_too_large");
    HttpResponse<String> pathTwice =
        http.json("POST", "/runs/run_00000000000000000000/cancel", "{\"run_id\": \"x\"}");
    assertError(pathTwice, 400, "invalid_argument");
    assertThat(tree(pathTwice).path("error").path("message").asText())
        .contains("given by the path");
    assertError(http.json("PUT", "/sessions/rs-json/context", "[]"), 400, "invalid_argument");
  }

  @Test
  void queryArguments_areConvertedToTheirKinds_andCheckedByTheDeclaration() throws Exception {
    HttpResponse<String> word = http.get("/runs?limit=abc");
    assertError(word, 400, "invalid_argument");
    assertThat(tree(word).path("error").path("message").asText())
        .isEqualTo("list_runs: argument 'limit' must be a whole number, got 'abc'");
    assertError(http.get("/runs?limit=0"), 400, "invalid_argument");
    assertError(http.get("/runs?limit=99999999999"), 400, "invalid_argument");
    assertError(http.get("/runs?status=bogus"), 400, "invalid_argument");
    assertError(http.get("/runs?limit=1&limit=2"), 400, "invalid_argument");
    HttpResponse<String> unknown = http.get("/runs?colour=red");
    assertThat(tree(unknown).path("error").path("message").asText())
        .isEqualTo(
            "list_runs: unknown argument 'colour' (accepted: limit, offset, session_id, status)");
    assertError(http.get("/runs/run_x?include_code=yes"), 400, "invalid_argument");
    assertError(http.get("/runs/run_00000000000000000000"), 404, "not_found");
    assertError(http.get("/runs/bad%20id"), 400, "invalid_argument");
    assertError(http.get("/sessions/x/files?run_id=y"), 400, "invalid_argument");
  }

  @Test
  void aRequestWithoutATenant_is401_failingClosed_butTheDocumentIsOpen() throws Exception {
    HttpResponse<String> r =
        http.client.send(
            HttpRequest.newBuilder(http.uri("/sessions")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertError(r, 401, "unauthenticated");
    assertThat(r.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
    HttpResponse<String> doc =
        http.client.send(
            HttpRequest.newBuilder(http.uri("/openapi.json")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(doc.statusCode()).isEqualTo(200);
  }
}

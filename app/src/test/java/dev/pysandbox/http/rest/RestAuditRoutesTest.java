package dev.pysandbox.http.rest;

import static dev.pysandbox.http.rest.RestTestServer.tree;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.core.DefaultSandboxService;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit routes over real HTTP against the real core: rerun, diff, delete, purge, export, and
 * get_run's notebook; their errors in the one error shape.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class RestAuditRoutesTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;
  static RestTestServer http;

  @BeforeAll
  static void start() throws Exception {
    service = TestServices.start(dataDir, Map.of());
    http = RestTestServer.start(RestServlet.of(service, TestServices.config(dataDir, Map.of())));
  }

  @AfterAll
  static void stop() throws Exception {
    http.close();
    service.close();
  }

  private static JsonNode ok(HttpResponse<String> r, int status) throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    return tree(r);
  }

  private static String error(HttpResponse<String> r, int status) throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    return tree(r).path("error").path("code").asText();
  }

  @Test
  void rerunThenDiff_thenTheNotebook_thenDelete() throws Exception {
    String parent =
        ok(http.json("POST", "/runs", "{\"code\": \"print('a')\", \"description\": \"d\"}"), 201)
            .path("run_id")
            .asText();
    HttpResponse<String> rerun =
        http.json("POST", "/runs/" + parent + "/rerun", "{\"code\": \"print('b')\"}");
    JsonNode child = ok(rerun, 201);
    String childId = child.path("run_id").asText();
    assertThat(child.path("parent_run_id").asText()).isEqualTo(parent);
    assertThat(rerun.headers().firstValue("Location")).hasValue("/api/v1/runs/" + childId);

    JsonNode diff = ok(http.get("/runs/" + childId + "/diff"), 200);
    assertThat(diff.path("relationship").asText()).isEqualTo("parent_child");
    assertThat(diff.path("stdout_diff").asText()).contains("-a").contains("+b");
    assertThat(
            ok(http.get("/runs/" + parent + "/diff?compare_to=" + childId), 200)
                .path("relationship")
                .asText())
        .isEqualTo("child_parent");
    assertThat(error(http.get("/runs/" + parent + "/diff"), 400)).isEqualTo("invalid_argument");

    JsonNode withNotebook = ok(http.get("/runs/" + childId + "?include_notebook_source=true"), 200);
    assertThat(withNotebook.path("notebook_source").asText()).contains("print('b')");
    assertThat(withNotebook.path("notebook_ipynb_path").asText()).endsWith("notebook.ipynb");
    assertThat(ok(http.get("/runs/" + childId), 200).has("notebook_source"))
        .as("only when asked")
        .isFalse();

    JsonNode deleted = ok(http.send(delete("/runs/" + parent)), 200);
    assertThat(deleted.path("deleted").asBoolean()).isTrue();
    assertThat(error(http.get("/runs/" + parent), 404)).isEqualTo("not_found");
    assertThat(error(http.send(delete("/runs/" + parent)), 404)).isEqualTo("not_found");
  }

  @Test
  void purge_isADryRunUnlessToldOtherwise_andRefusesBadArguments() throws Exception {
    ok(http.json("POST", "/runs", "{\"code\": \"print(1)\"}"), 201);
    JsonNode dry = ok(http.json("POST", "/runs/purge", "{\"older_than_days\": 0}"), 200);
    assertThat(dry.path("dry_run").asBoolean()).isTrue();
    assertThat(dry.path("runs").asLong()).isPositive();
    assertThat(
            error(
                http.json(
                    "POST", "/runs/purge", "{\"older_than_days\": 0, \"status\": \"running\"}"),
                400))
        .isEqualTo("invalid_argument");
    assertThat(error(http.json("POST", "/runs/purge", "{}"), 400)).isEqualTo("invalid_argument");
    JsonNode none =
        ok(
            http.json("POST", "/runs/purge", "{\"older_than_days\": 3650, \"dry_run\": false}"),
            200);
    assertThat(none.path("runs").asLong()).isZero();
  }

  @Test
  void exportSession_returnsTheNotebook_withoutAHostPath() throws Exception {
    ok(http.json("POST", "/runs", "{\"code\": \"v = 41\", \"session_id\": \"rest-exp\"}"), 201);
    ok(http.json("POST", "/runs", "{\"code\": \"v + 1\", \"session_id\": \"rest-exp\"}"), 201);
    JsonNode e =
        ok(http.json("POST", "/sessions/rest-exp/export", "{\"format\": \"marimo\"}"), 200);
    assertThat(e.path("run_count").asInt()).isEqualTo(2);
    assertThat(e.path("content").asText()).contains("v = 41").contains("@app.cell");
    assertThat(e.has("path")).isFalse();
    assertThat(error(http.json("POST", "/sessions/nobody/export", "{}"), 404))
        .isEqualTo("not_found");
  }

  private static HttpRequest.Builder delete(String path) {
    return http.request(path).DELETE();
  }
}

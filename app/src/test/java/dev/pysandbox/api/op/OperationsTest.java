package dev.pysandbox.api.op;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.Fast;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.UploadRequest;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

@Fast
class OperationsTest {
  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  /**
   * The input schemas the MCP face sent before they were derived (issue 11), hand-written then: the
   * derived ones must say the same, property for property.
   */
  private static JsonNode pinnedSchemas() throws IOException {
    try (InputStream in = OperationsTest.class.getResourceAsStream("input-schemas.json")) {
      return JSON.readTree(in);
    }
  }

  private static JsonNode derived(Operation op) throws IOException {
    return JSON.readTree(JSON.writeValueAsString(InputSchema.of(op)));
  }

  @Test
  void everyOperation_hasItsOneCall() {
    assertThat(Operations.ALL)
        .allSatisfy(op -> assertThat(OperationCalls.has(op)).as(op.name()).isTrue());
  }

  @Test
  void inputSchema_ofEveryOperation_equalsTheHandWrittenSchemaItReplaced() throws IOException {
    JsonNode pinned = pinnedSchemas();
    assertThat(Operations.ALL).extracting(Operation::name).hasSize(pinned.size());
    for (Operation op : Operations.ALL) {
      assertThat(derived(op)).as(op.name()).isEqualTo(pinned.get(op.name()));
    }
  }

  @Test
  void inputSchema_ofRunPython_hasTheContractsPropertiesAndAdmitsNothingElse() throws IOException {
    JsonNode s = derived(Operations.RUN_PYTHON);
    assertThat(s.get("required")).hasSize(1);
    assertThat(s.get("required").get(0).asText()).isEqualTo("code");
    assertThat(s.get("additionalProperties").asBoolean(true)).isFalse();
    assertThat(s.at("/properties/session_id/pattern").asText()).isEqualTo("^" + Ids.REGEX + "$");
    assertThat(s.at("/properties/timeout_seconds/default").asInt()).isEqualTo(60);
    assertThat(s.at("/properties/description/maxLength").asInt())
        .isEqualTo(ExecutionRequest.MAX_DESCRIPTION_CHARS);
  }

  @Test
  void everyIdArgument_usesTheOneIdRule() {
    for (Operation op : Operations.ALL) {
      for (Param p : op.params()) {
        if (p.name().endsWith("_id")) {
          assertThat(p.pattern()).as(op.name() + "." + p.name()).isEqualTo(Ids.REGEX);
        }
      }
    }
  }

  @Test
  void operationNames_areUnique() {
    assertThat(Operations.ALL).extracting(Operation::name).doesNotHaveDuplicates();
  }

  @Test
  void parse_appliesDeclaredDefaults_butLeavesServerDefaultsAbsent() {
    Arguments a = Operations.LIST_RUNS.parse(null);
    assertThat(a.integer("limit")).isEqualTo(20);
    assertThat(a.integer("offset")).isZero();
    assertThat(a.string("status")).isNull();
    assertThat(Operations.READ_ARTIFACT.parse(Map.of("path", "x")).longInteger("max_size_bytes"))
        .isEqualTo(5_000_000L);
    assertThat(Operations.GET_RUN.parse(Map.of("run_id", "r")).bool("include_code")).isTrue();
    Arguments run = Operations.RUN_PYTHON.parse(Map.of("code", "1"));
    assertThat(run.integer("timeout_seconds")).isNull();
  }

  @Test
  void parse_whenArgumentIsUnknown_namesItAndWhatIsAccepted() {
    assertInvalid(
        () -> Operations.GET_RUN.parse(Map.of("run_id", "r", "bogus", 1)),
        "get_run: unknown argument 'bogus' (accepted: include_code, include_notebook_source, run_id,"
            + " wait_seconds)");
    assertInvalid(
        () -> Operations.CHECK_SETUP.parse(Map.of("x", 1)),
        "check_setup: unknown argument 'x' (check_setup takes no arguments)");
  }

  @Test
  void parse_whenRequiredArgumentIsMissing_namesIt() {
    assertInvalid(
        () -> Operations.RUN_PYTHON.parse(Map.of()), "run_python: argument 'code' is required");
    Map<String, Object> nullCode = new HashMap<>();
    nullCode.put("code", null);
    assertInvalid(
        () -> Operations.RUN_PYTHON.parse(nullCode), "run_python: argument 'code' is required");
  }

  @Test
  void parse_whenTypeIsWrong_namesArgumentAndWhatCame() {
    assertInvalid(
        () -> Operations.RUN_PYTHON.parse(Map.of("code", 42)),
        "run_python: argument 'code' must be a string, got a number");
    assertInvalid(
        () -> Operations.LIST_RUNS.parse(Map.of("limit", 1.5)),
        "list_runs: argument 'limit' must be a whole number, got a number");
    assertInvalid(
        () -> Operations.LIST_RUNS.parse(Map.of("limit", 1e12)),
        "list_runs: argument 'limit' is out of range: 1.0E12");
    assertInvalid(
        () -> Operations.CREATE_SESSION.parse(Map.of("cpu_limit", "lots")),
        "create_session: argument 'cpu_limit' must be a number, got a string");
    assertInvalid(
        () -> Operations.GET_RUN.parse(Map.of("run_id", "r", "include_code", "yes")),
        "get_run: argument 'include_code' must be true or false, got a string");
    assertInvalid(
        () -> Operations.GET_CONTEXT.parse(Map.of("session_id", "s", "names", List.of(1))),
        "get_context: argument 'names' must be a list of strings");
    assertInvalid(
        () -> Operations.SET_CONTEXT.parse(Map.of("session_id", "s", "values", List.of())),
        "set_context: argument 'values' must be a JSON object, got an array");
    assertThat(Operations.LIST_RUNS.parse(Map.of("limit", 7.0)).integer("limit")).isEqualTo(7);
  }

  @Test
  void parse_whenValueIsNotAmongThoseAllowed_listsThem() {
    assertInvalid(
        () -> Operations.LIST_RUNS.parse(Map.of("status", "nope")),
        "list_runs: unknown status 'nope' (one of running, succeeded, failed, timed_out,"
            + " cancelled, interrupted)");
  }

  @Test
  void getter_forAnUndeclaredArgument_isABugInTheFace() {
    Arguments a = Operations.CHECK_SETUP.parse(Map.of());
    assertThatThrownBy(() -> a.string("code")).isInstanceOf(IllegalArgumentException.class);
    Arguments l = Operations.LIST_RUNS.parse(Map.of());
    assertThatThrownBy(() -> l.string("limit")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void requestValues_enforceTheRulesTheDeclarationsState() {
    assertInvalid(
        () -> new RunQuery(RunQuery.MAX_LIMIT + 1, 0, null, null), "limit must be 1..1000");
    assertInvalid(
        () -> new RunQuery(1, 0, null, "../x"),
        "session_id '../x' is invalid: use 1-64 characters of letters, digits, '_' and '-'");
    assertInvalid(
        () -> new ExecutionRequest("1", null, "d".repeat(10_001), null),
        "description is 10001 characters; at most 10000 are allowed");
    assertInvalid(() -> new ExecutionRequest("1", "a".repeat(65), null, null), "session_id 'aaaa");
    assertThat(new UploadRequest("s", "a/b.csv", "x", null, false).filename())
        .as("a path with folders")
        .isEqualTo("a/b.csv");
    for (String bad : new String[] {"a/../b", "/a", "a//b", "a/./b", "./a", "a/", "a\\b"}) {
      assertInvalid(
          () -> new UploadRequest("s", bad, "x", null, false),
          "filename " + PysandboxException.quote(bad) + " is invalid");
    }
    assertInvalid(
        () -> new UploadRequest("s", "a/".repeat(16) + "b", "x", null, false), "at most 16 names");
    assertInvalid(
        () -> new UploadRequest("s", "a", null, null, false),
        "give exactly one of content and content_base64");
    assertThat(Ids.requireRunId("run_0123456789abcdef0123")).isNotNull();
    assertInvalid(() -> Ids.requireRunId(null), "run_id (missing) is invalid");
  }

  private static void assertInvalid(
      org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
    assertThatThrownBy(call)
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining(message)
        .satisfies(
            e -> assertThat(((PysandboxException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }
}

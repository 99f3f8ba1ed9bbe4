package dev.pysandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pysandbox.InProcessMcp;
import dev.pysandbox.ManualTime;
import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.app.Assembly;
import dev.pysandbox.packages.SimpleIndex;
import dev.pysandbox.packages.TinyWheels;
import dev.pysandbox.store.SessionKey;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session that expired, was closed, was lost with its server, or whose creation failed is never
 * made again empty by a call naming it: every such call answers how and when it ended, for {@code
 * session_retention}; through the real MCP face, on a real core whose time the test moves, with
 * real sandboxes and a real package index.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Sandboxed
class EndedSessionsTest {
  private static final Instant T0 = Instant.parse("2026-11-28T09:30:00Z");

  @TempDir Path dataDir;
  @TempDir Path wheels;
  ManualTime clock = ManualTime.wallOnly(T0);
  SimpleIndex index;
  DefaultSandboxService service;
  InProcessMcp mcp;

  @BeforeEach
  void start() throws Exception {
    TinyWheels.build(wheels, "tinypkg", "1.0");
    index = SimpleIndex.serve(wheels);
    service = startService();
    mcp = new InProcessMcp(service);
  }

  private DefaultSandboxService startService() {
    DefaultSandboxService s =
        Assembly.create(
            TestServices.config(
                dataDir,
                Map.of(
                    "pool_size",
                    "1",
                    "index_url",
                    index.url().toString(),
                    "network_allow_private",
                    "true")),
            clock);
    s.startBackground();
    s.awaitStarted();
    return s;
  }

  @AfterEach
  void stop() throws Exception {
    mcp.close();
    service.close();
    index.close();
  }

  @Test
  void anExpiredSession_answersSessionExpired_toEveryCallNamingIt_sayingWhenAndWhy()
      throws Exception {
    mcp.ok("create_session", Map.of("session_id", "s-42", "ttl_minutes", 30));
    mcp.ok("run_python", Map.of("session_id", "s-42", "code", "x = 41"));
    mcp.ok("upload_file", Map.of("session_id", "s-42", "filename", "a.txt", "content", "hi"));
    clock.advance(Duration.ofMinutes(31));
    assertThat(service.expireIdleSessions()).containsExactly(new SessionKey("local", "s-42"));

    JsonNode e = mcp.error("run_python", Map.of("session_id", "s-42", "code", "print(x + 1)"));
    assertThat(e.path("code").asText()).isEqualTo("session_expired");
    assertThat(e.path("retryable").asBoolean()).isFalse();
    assertThat(e.path("message").asText())
        .startsWith(
            "session 's-42' expired at 2026-11-28T10:01:00Z after 31 min idle (ttl 30 min); its"
                + " variables and files are gone.")
        .contains("create_session makes this id a new, empty session, or use another session_id")
        .endsWith(
            "until 2026-11-29T10:01:00Z (session_retention) a call naming it gets this answer");
    Map<String, Map<String, ?>> others =
        Map.of(
            "get_context", Map.of("session_id", "s-42"),
            "set_context", Map.of("session_id", "s-42", "values", Map.of("y", 1)),
            "clear_context", Map.of("session_id", "s-42"),
            "upload_file", Map.of("session_id", "s-42", "filename", "b.txt", "content", "again"),
            "download_file",
                Map.of("session_id", "s-42", "url", "http://127.0.0.1:9/x", "filename", "x"),
            "list_artifacts", Map.of("session_id", "s-42"),
            "read_artifact", Map.of("session_id", "s-42", "path", "a.txt"),
            "close_session", Map.of("session_id", "s-42"));
    for (var call : others.entrySet()) {
      JsonNode other = mcp.error(call.getKey(), call.getValue());
      assertThat(other.path("code").asText()).as(call.getKey()).isEqualTo("session_expired");
      assertThat(other.path("message").asText())
          .as(call.getKey())
          .startsWith("session 's-42' expired at 2026-11-28T10:01:00Z");
    }
    assertThat(service.listSessions()).as("nothing was made again").isEmpty();

    assertThat(mcp.ok("list_sessions", Map.of()).path("sessions")).isEmpty();
    JsonNode ended = mcp.ok("list_sessions", Map.of("include_ended", true)).path("sessions");
    assertThat(ended).hasSize(1);
    assertThat(ended.get(0).path("state").asText()).isEqualTo("closed");
    assertThat(ended.get(0).path("ended").path("as").asText()).isEqualTo("expired");
    assertThat(ended.get(0).path("ended").path("at").asText()).isEqualTo("2026-11-28T10:01:00Z");
    assertThat(mcp.ok("export_session", Map.of("session_id", "s-42", "format", "ipynb")))
        .as("its record stays exportable")
        .isNotEmpty();
  }

  @Test
  void aClosedSession_isNewAgainAfterTheRetention_andNeverSeenByAnotherTenant() throws Exception {
    mcp.ok("run_python", Map.of("session_id", "s", "code", "x = 1"));
    mcp.ok("close_session", Map.of("session_id", "s"));
    JsonNode closed = mcp.error("run_python", Map.of("session_id", "s", "code", "print(x)"));
    assertThat(closed.path("code").asText()).isEqualTo("session_closed");
    assertThat(closed.path("message").asText())
        .startsWith("session 's' was closed at 2026-11-28T09:30:00Z by close_session;");

    try (InProcessMcp bob = new InProcessMcp(service.forTenant("bob"))) {
      JsonNode fresh = bob.ok("run_python", Map.of("session_id", "s", "code", "print('bob')"));
      assertThat(fresh.path("stdout").asText())
          .as("for another tenant the id is simply new")
          .isEqualTo("bob\n");
      assertThat(bob.error("get_context", Map.of("session_id", "other")).path("code").asText())
          .isEqualTo("not_found");
    }

    clock.advance(Duration.ofHours(24).plusMinutes(1));
    JsonNode again =
        mcp.ok("run_python", Map.of("session_id", "s", "code", "print('x' in globals())"));
    assertThat(again.path("stdout").asText()).isEqualTo("False\n");
    assertThat(mcp.ok("list_sessions", Map.of("include_ended", true)).path("sessions"))
        .extracting(n -> n.path("session_id").asText() + ":" + n.path("state").asText())
        .containsExactly("s:idle");
  }

  @Test
  void createSession_takesAnEndedIdAtOnce_asANewEmptySession_andNewIdsAreMadeOnFirstUse()
      throws Exception {
    mcp.ok("run_python", Map.of("session_id", "c", "code", "x = 1"));
    mcp.ok("close_session", Map.of("session_id", "c"));
    mcp.ok("create_session", Map.of("session_id", "c"));
    assertThat(
            mcp.ok("run_python", Map.of("session_id", "c", "code", "print('x' in globals())"))
                .path("stdout")
                .asText())
        .isEqualTo("False\n");
    assertThat(
            mcp.ok("run_python", Map.of("session_id", "brand-new", "code", "print(2)"))
                .path("stdout")
                .asText())
        .isEqualTo("2\n");
  }

  @Test
  void endsSurviveARestart_andASessionOpenWhenItsServerStopped_isLost() throws Exception {
    mcp.ok("run_python", Map.of("session_id", "kept", "code", "x = 1"));
    mcp.ok("run_python", Map.of("session_id", "gone", "code", "x = 1"));
    mcp.ok("close_session", Map.of("session_id", "gone"));
    clock.advance(Duration.ofMinutes(5));
    mcp.close();
    service.close();

    service = startService();
    mcp = new InProcessMcp(service);
    JsonNode lost = mcp.error("run_python", Map.of("session_id", "kept", "code", "print(x)"));
    assertThat(lost.path("code").asText()).isEqualTo("session_lost");
    assertThat(lost.path("message").asText())
        .startsWith(
            "session 'kept' was lost at 2026-11-28T09:35:00Z: its server stopped while it was"
                + " open (the server stopped) (last used at 2026-11-28T09:30:00Z); its variables"
                + " and files are gone.");
    assertThat(mcp.error("get_context", Map.of("session_id", "gone")).path("code").asText())
        .isEqualTo("session_closed");
    assertThat(
            mcp.ok("run_python", Map.of("session_id", "brand-new", "code", "print(3)"))
                .path("stdout")
                .asText())
        .isEqualTo("3\n");
  }

  @Test
  void withNoRetention_anEndedIdIsNewAtOnce_asBefore() throws Exception {
    DefaultSandboxService none =
        Assembly.create(
            TestServices.config(
                dataDir.resolve("none"), Map.of("pool_size", "1", "session_retention", "0")),
            clock);
    none.startBackground();
    none.awaitStarted();
    try (InProcessMcp client = new InProcessMcp(none)) {
      client.ok("run_python", Map.of("session_id", "z", "code", "x = 1"));
      client.ok("close_session", Map.of("session_id", "z"));
      assertThat(
              client
                  .ok("run_python", Map.of("session_id", "z", "code", "print('x' in globals())"))
                  .path("stdout")
                  .asText())
          .isEqualTo("False\n");
    } finally {
      none.close();
    }
  }

  @Test
  void aSessionWhoseEnvironmentFailed_isNotMadeWithoutItsPackages_butTheSameCreationMayRetry()
      throws Exception {
    index.unavailable(true);
    JsonNode failed =
        mcp.error(
            "run_python",
            Map.of(
                "session_id", "pk", "code", "import tinypkg", "packages", List.of("tinypkg==1.0")));
    assertThat(failed.path("code").asText()).isEqualTo("environment_failed");
    assertThat(failed.path("retryable").asBoolean()).isTrue();
    index.unavailable(false);

    for (String tool : List.of("run_python", "upload_file", "get_context")) {
      Map<String, ?> args =
          switch (tool) {
            case "run_python" -> Map.of("session_id", "pk", "code", "import tinypkg");
            case "upload_file" -> Map.of("session_id", "pk", "filename", "f", "content", "x");
            default -> Map.of("session_id", "pk");
          };
      JsonNode e = mcp.error(tool, args);
      assertThat(e.path("code").asText()).as(tool).isEqualTo("environment_failed");
      assertThat(e.path("retryable").asBoolean()).as(tool).isFalse();
      assertThat(e.path("message").asText())
          .as(tool)
          .startsWith(
              "session 'pk' does not exist: its creation at 2026-11-28T09:30:00Z failed"
                  + " (environment_failed: ")
          .contains("tier basic, packages [tinypkg==1.0]");
    }
    assertThat(service.listSessions()).as("not made without its package").isEmpty();

    JsonNode retried =
        mcp.ok(
            "run_python",
            Map.of(
                "session_id",
                "pk",
                "code",
                "import tinypkg; print(tinypkg.hello())",
                "packages",
                List.of("tinypkg==1.0")));
    assertThat(retried.path("status").asText()).as(retried.toString()).isEqualTo("succeeded");
  }
}

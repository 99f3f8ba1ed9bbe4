package dev.pysandbox.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.api.Artifact;
import dev.pysandbox.api.ArtifactChange;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunPage;
import dev.pysandbox.api.RunQuery;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.api.SecurityEvent;
import dev.pysandbox.api.SecurityEventQuery;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every {@link RunStore} must do; each implementation's test extends this. */
public abstract class RunStoreContract {
  protected RunStore store;

  /**
   * Opens a store. Every call in one test returns a new store over the same data, as another server
   * process sharing the data directory would see it.
   */
  protected abstract RunStore newStore() throws Exception;

  @BeforeEach
  void open() throws Exception {
    store = newStore();
  }

  @AfterEach
  void close() {
    store.close();
  }

  static RunRecord.Builder running(String id, long createdMillis) {
    return RunRecord.builder()
        .runId(id)
        .status(RunStatus.RUNNING)
        .code("print(1)")
        .codeHash("a".repeat(64))
        .timeoutSeconds(60)
        .backend("bwrap")
        .createdAt(Instant.ofEpochMilli(createdMillis).toString());
  }

  @Test
  void insertedRun_isRunning_withNoOutputYet() {
    store.insert(
        running("run_1", 1000).description("first").tier("filesystem").build(), "aaaaaaaa");
    RunRecord r = store.get("run_1", true).orElseThrow();
    assertThat(r.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(r.tier()).isEqualTo("filesystem");
    assertThat(r.description()).isEqualTo("first");
    assertThat(r.code()).isEqualTo("print(1)");
    assertThat(r.stdout()).isNull();
    assertThat(r.error()).isNull();
    assertThat(r.artifacts()).isEmpty();
    assertThat(store.get("run_1", false).orElseThrow().code()).isNull();
  }

  @Test
  void finish_writesEverythingOnce() {
    store.insert(running("run_2", 2000).build(), "aaaaaaaa");
    RunRecord done =
        running("run_2", 2000)
            .status(RunStatus.FAILED)
            .message("ZeroDivisionError: division by zero")
            .stdout("out")
            .stderr("err")
            .stdoutTruncated(true)
            .stdoutBytes(10_000_000L)
            .stderrBytes(3)
            .exitCode(1)
            .error(new ErrorInfo("ZeroDivisionError", "division by zero", "Traceback ..."))
            .result(Map.of("text/plain", "2"))
            .displays(List.of(Map.of("text/plain", "<Figure>", "image/png", "iVBOR")))
            .outputs(Map.of("n", 3, "when", Map.of("repr", "datetime(...)", "type", "datetime")))
            .outputsNonJson(List.of("when"))
            .artifacts(
                List.of(
                    new Artifact("a.csv", 4, "b".repeat(64), "text/csv", ArtifactChange.CREATED),
                    new Artifact(
                        "l",
                        0,
                        null,
                        "application/octet-stream",
                        ArtifactChange.CREATED,
                        "a symbolic link")))
            .artifactsDir("/data/runs/run_2/files")
            .finishedAt(Instant.ofEpochMilli(2500).toString())
            .durationMs(12L)
            .build();
    assertThat(store.finish(done)).isTrue();
    RunRecord r = store.get("run_2", true).orElseThrow();
    assertThat(r.toBuilder().viewCommand(null).build())
        .isEqualTo(done.toBuilder().tenant("local").build());
    assertThat(store.keptBytes("local")).as("nothing kept in the blob store yet").isZero();
    // What the run kept is what the blob store references (the link left out has no blob); the
    // same content kept twice counts once.
    store.blobs().reference("local", "run_2", "a.csv", "b".repeat(64), 4);
    store.blobs().reference("local", "run_2", "copy/a.csv", "b".repeat(64), 4);
    assertThat(store.keptBytes("local"))
        .as("tenant_storage_max_mb counts each kept content once: a.csv's")
        .isEqualTo(4);
    assertThat(store.keptBytes("other")).isZero();
    assertThat(store.finish(done.toBuilder().status(RunStatus.SUCCEEDED).build()))
        .as("a finished run never changes")
        .isFalse();
    assertThat(store.get("run_2", true).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
  }

  @Test
  void list_isNewestFirst_paged_andFiltered() {
    for (int i = 0; i < 5; i++) {
      store.insert(
          running("run_l" + i, 10_000 + i).sessionId(i % 2 == 0 ? "s-even" : null).build(),
          "aaaaaaaa");
    }
    store.finish(
        running("run_l1", 10_001)
            .status(RunStatus.SUCCEEDED)
            .finishedAt(Instant.ofEpochMilli(20_000).toString())
            .build());
    RunPage page = store.list("local", new RunQuery(2, 1, null, null));
    assertThat(page.total()).isEqualTo(5);
    assertThat(page.runs()).extracting(s -> s.runId()).containsExactly("run_l3", "run_l2");
    assertThat(store.list("local", new RunQuery(10, 0, RunStatus.SUCCEEDED, null)).runs())
        .extracting(s -> s.runId())
        .containsExactly("run_l1");
    assertThat(store.list("local", new RunQuery(10, 0, null, "s-even")).total()).isEqualTo(3);
    assertThat(page.runs().get(0).codePreview()).isEqualTo("print(1)");
  }

  @Test
  void interruptOrphans_touchesOnlyRunsOfDeadServers() {
    store.insert(running("run_dead", 1).build(), "deaddead");
    store.insert(running("run_live", 2).build(), "11111111");
    List<String> changed = store.interruptOrphans(instance -> instance.equals("11111111"));
    assertThat(changed).containsExactly("run_dead");
    RunRecord dead = store.get("run_dead", false).orElseThrow();
    assertThat(dead.status()).isEqualTo(RunStatus.INTERRUPTED);
    assertThat(dead.message()).contains("deaddead").contains("stopped");
    assertThat(dead.finishedAt()).isNotNull();
    assertThat(store.get("run_live", false).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);
  }

  @Test
  void unknownRun_isEmpty() {
    assertThat(store.get("run_nope", true)).isEmpty();
  }

  // -- security events ---------------------------------------------------------------------------

  static String eventId(int n) {
    return String.format("evt_%016x", n);
  }

  static SecurityEvent event(
      int n, String tenant, SecurityEvent.Kind kind, String session, long atMillis) {
    Map<String, Object> detail = new LinkedHashMap<>();
    detail.put("limit", "timeout");
    detail.put("limits", Map.of("memory_limit_mb", 512, "timeout_seconds", 1));
    detail.put("message", "execution timed out after 1003 ms (limit 1 s)");
    return new SecurityEvent(
        eventId(n),
        kind.wireName(),
        tenant,
        session,
        "run_" + String.format("%020x", n),
        Instant.ofEpochMilli(atMillis).toString(),
        detail);
  }

  private List<String> ids(String tenant, SecurityEventQuery q) {
    return store.securityEvents(tenant, q).stream().map(SecurityEvent::eventId).toList();
  }

  private static SecurityEventQuery query(
      String since, SecurityEvent.Kind kind, String session, int limit, String cursor) {
    return new SecurityEventQuery(since, kind, session, limit, cursor);
  }

  @Test
  void securityEvents_areKeptAsRecorded_newestFirst_andListedOnlyToTheirTenant() throws Exception {
    SecurityEvent first = event(1, "alice", SecurityEvent.Kind.LIMIT_STOPPED_RUN, "s1", 1_000);
    SecurityEvent second = event(2, "alice", SecurityEvent.Kind.SANDBOX_DIED, null, 2_000);
    SecurityEvent bobs = event(3, "bob", SecurityEvent.Kind.LIMIT_STOPPED_RUN, "s1", 1_500);
    store.recordSecurityEvent(first);
    store.recordSecurityEvent(second);
    store.recordSecurityEvent(bobs);

    List<SecurityEvent> alices = store.securityEvents("alice", SecurityEventQuery.newest());
    assertThat(alices).containsExactly(second, first);
    assertThat(alices.get(1).detail())
        .containsEntry("limit", "timeout")
        .containsEntry("limits", Map.of("memory_limit_mb", 512, "timeout_seconds", 1));
    assertThat(alices.get(1).tenant()).isEqualTo("alice");
    assertThat(store.securityEvents("bob", SecurityEventQuery.newest())).containsExactly(bobs);
    assertThat(store.securityEvents("carol", SecurityEventQuery.newest())).isEmpty();

    // Another process sharing the data sees them too.
    RunStore other = newStore();
    try {
      assertThat(other.securityEvents("alice", SecurityEventQuery.newest()))
          .containsExactly(second, first);
    } finally {
      other.close();
    }
  }

  @Test
  void securityEvents_areFilteredByKindSessionAndSince() {
    store.recordSecurityEvent(event(1, "alice", SecurityEvent.Kind.LIMIT_STOPPED_RUN, "s1", 1_000));
    store.recordSecurityEvent(event(2, "alice", SecurityEvent.Kind.SANDBOX_DIED, "s1", 2_000));
    store.recordSecurityEvent(event(3, "alice", SecurityEvent.Kind.LIMIT_STOPPED_RUN, "s2", 3_000));
    store.recordSecurityEvent(event(4, "alice", SecurityEvent.Kind.LIMIT_STOPPED_RUN, null, 4_000));

    assertThat(ids("alice", query(null, SecurityEvent.Kind.LIMIT_STOPPED_RUN, null, 100, null)))
        .containsExactly(eventId(4), eventId(3), eventId(1));
    assertThat(ids("alice", query(null, SecurityEvent.Kind.APPROVAL_DENIED, null, 100, null)))
        .isEmpty();
    assertThat(ids("alice", query(null, null, "s1", 100, null)))
        .containsExactly(eventId(2), eventId(1));
    // since is inclusive: an event at that very millisecond is listed.
    assertThat(ids("alice", query("1970-01-01T00:00:02Z", null, null, 100, null)))
        .containsExactly(eventId(4), eventId(3), eventId(2));
    assertThat(
            ids(
                "alice",
                query(
                    "1970-01-01T00:00:02Z", SecurityEvent.Kind.LIMIT_STOPPED_RUN, "s2", 100, null)))
        .containsExactly(eventId(3));
    // An age reaches back from now: these events are from 1970.
    assertThat(ids("alice", query("1h", null, null, 100, null))).isEmpty();
  }

  @Test
  void securityEvents_pageByCursor_neitherSkippingNorRepeating_acrossSameMillisecondTies() {
    for (int i = 1; i <= 7; i++) {
      // Three pairs share a millisecond: the id breaks the tie.
      store.recordSecurityEvent(
          event(i, "alice", SecurityEvent.Kind.LIMIT_STOPPED_RUN, "s1", 1_000L * ((i + 1) / 2)));
    }
    store.recordSecurityEvent(event(99, "bob", SecurityEvent.Kind.LIMIT_STOPPED_RUN, "s1", 2_000));
    List<String> all = ids("alice", query(null, null, null, 100, null));
    assertThat(all).hasSize(7);

    List<String> paged = new ArrayList<>();
    String cursor = null;
    for (int page = 0; page < 10; page++) {
      List<String> ids = ids("alice", query(null, null, null, 3, cursor));
      paged.addAll(ids);
      if (ids.size() < 3) {
        break;
      }
      cursor = ids.get(ids.size() - 1);
    }
    assertThat(paged).isEqualTo(all);
    // A limit is a limit.
    assertThat(ids("alice", query(null, null, null, 1, null))).containsExactly(all.get(0));
  }

  @Test
  void securityEvents_cursorNamingAnotherTenantsEvent_isRefusedAsOneThatDoesNotExist() {
    store.recordSecurityEvent(event(1, "alice", SecurityEvent.Kind.SANDBOX_DIED, null, 1_000));
    store.recordSecurityEvent(event(2, "bob", SecurityEvent.Kind.SANDBOX_DIED, null, 1_000));

    PysandboxException theirs =
        org.assertj.core.api.Assertions.catchThrowableOfType(
            PysandboxException.class,
            () -> store.securityEvents("bob", query(null, null, null, 10, eventId(1))));
    PysandboxException unknown =
        org.assertj.core.api.Assertions.catchThrowableOfType(
            PysandboxException.class,
            () -> store.securityEvents("bob", query(null, null, null, 10, eventId(42))));
    assertThat(theirs.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(theirs.getMessage().replace(eventId(1), "ID"))
        .isEqualTo(unknown.getMessage().replace(eventId(42), "ID"));
    assertThat(store.securityEvents("bob", query(null, null, null, 10, eventId(2)))).isEmpty();
  }
}

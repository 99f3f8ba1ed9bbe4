package dev.pysandbox.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.api.SessionEnd;
import dev.pysandbox.api.SessionInfo;
import dev.pysandbox.api.SessionState;
import dev.pysandbox.api.WireEnum;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every {@link RunStore} must do with sessions: their rows, close requests, claims among
 * servers, and the ends kept for {@code session_retention}; each implementation's test extends
 * this.
 */
public abstract class SessionRowsContract {
  /** Ends recorded before this may be reused in a claim (the cut-off a server passes). */
  static final Instant NOW = Instant.ofEpochMilli(10_000);

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

  @Test
  void sessions_areRecorded_closeRequested_andOrphansClosed() {
    var s1 =
        new dev.pysandbox.api.SessionInfo(
            "s1",
            SessionState.IDLE,
            Instant.ofEpochMilli(1000).toString(),
            Instant.ofEpochMilli(2000).toString(),
            3,
            10,
            30,
            null,
            null,
            "data_science",
            java.util.List.of("tinypkg==1.0"),
            "e0123456789abcdef",
            null,
            null);
    store.saveSession("local", s1, "11111111");
    store.saveSession(
        "local",
        new dev.pysandbox.api.SessionInfo(
            "s2",
            SessionState.DEAD,
            Instant.ofEpochMilli(1500).toString(),
            Instant.ofEpochMilli(2500).toString(),
            1,
            0,
            30,
            "timeout: ...",
            null,
            null,
            null,
            null,
            null,
            null),
        "deaddead");
    assertThat(store.openSessions("local", i -> true))
        .extracting(s -> s.sessionId() + ":" + s.state() + ":" + s.tier())
        .containsExactly("s1:idle:data_science", "s2:dead:null");
    assertThat(store.openSessions("local", i -> true).get(0).packages())
        .containsExactly("tinypkg==1.0");
    assertThat(store.openSessions("local", i -> true).get(0).environment())
        .isEqualTo("e0123456789abcdef");
    assertThat(store.environmentUse("local"))
        .extracting(u -> u.key() + ":" + u.runs())
        .containsExactly("e0123456789abcdef:0");
    assertThat(store.environmentUse("other")).isEmpty();
    assertThat(store.requestClose(new dev.pysandbox.store.SessionKey("local", "s1"))).isTrue();
    assertThat(store.requestClose(new dev.pysandbox.store.SessionKey("local", "nope"))).isFalse();
    assertThat(store.closeRequests("11111111")).containsExactly(new SessionKey("local", "s1"));
    assertThat(store.closeRequests("deaddead")).isEmpty();
    assertThat(store.closeOrphanSessions(i -> i.equals("11111111"))).containsExactly("s2");
    SessionInfo lost = store.recordedSession("local", "s2").orElseThrow();
    assertThat(lost.state()).isEqualTo(SessionState.CLOSED);
    assertThat(lost.ended().as()).isEqualTo("lost");
    assertThat(lost.ended().reason()).contains("deaddead").contains("stopped");
    store.saveSession(
        "local",
        new dev.pysandbox.api.SessionInfo(
            "s1",
            SessionState.CLOSED,
            s1.createdAt(),
            s1.lastUsedAt(),
            3,
            10,
            30,
            null,
            null,
            "data_science",
            null,
            null,
            null,
            null),
        "11111111");
    assertThat(store.openSessions("local", i -> true)).isEmpty();
    assertThat(store.closeRequests("11111111")).isEmpty();
    store.saveSession("local", s1, "11111111");
    assertThat(store.closeRequests("11111111"))
        .as("a reopened session starts without a close request")
        .isEmpty();
  }

  // -- claimSession ------------------------------------------------------------------------------

  private static SessionInfo session(String id, String state) {
    return new SessionInfo(
        id,
        WireEnum.parse(SessionState.class, state),
        Instant.ofEpochMilli(1000).toString(),
        Instant.ofEpochMilli(2000).toString(),
        0,
        0,
        30,
        null,
        null,
        null,
        null,
        null,
        null,
        null);
  }

  @Test
  void claimSession_ofANewId_isOurs_andRecordsIt() {
    assertThat(store.claimSession("local", session("c1", "starting"), "11111111", i -> true, NOW))
        .isEqualTo(SessionClaim.OURS);
    assertThat(store.openSessions("local", i -> true))
        .extracting(s -> s.sessionId() + ":" + s.state())
        .containsExactly("c1:starting");
    assertThat(store.claimSession("local", session("c1", "idle"), "11111111", i -> true, NOW))
        .as("already ours")
        .isEqualTo(SessionClaim.OURS);
    assertThat(store.openSessions("local", i -> true))
        .extracting(s -> s.sessionId() + ":" + s.state())
        .containsExactly("c1:idle");
  }

  @Test
  void claimSession_ownedByALiveInstance_isRefused_namingTheOwner() {
    store.claimSession("local", session("c2", "idle"), "11111111", i -> true, NOW);
    List<String> asked = new ArrayList<>();
    SessionClaim refused =
        store.claimSession(
            "local",
            session("c2", "starting"),
            "22222222",
            i -> {
              asked.add(i);
              return true;
            },
            NOW);
    assertThat(refused.owner()).isEqualTo("11111111");
    assertThat(asked).containsExactly("11111111");
    assertThat(store.openSessions("local", i -> true))
        .extracting(s -> s.sessionId() + ":" + s.state())
        .as("the owner's row is untouched")
        .containsExactly("c2:idle");
    assertThat(store.requestClose(new dev.pysandbox.store.SessionKey("local", "c2"))).isTrue();
    assertThat(store.closeRequests("11111111")).containsExactly(new SessionKey("local", "c2"));
    assertThat(store.closeRequests("22222222")).isEmpty();
  }

  @Test
  void claimSession_ownedByADeadInstance_recordsItLost_andTakesItOnlyOnceEndsMayBeReused() {
    store.claimSession("local", session("c3", "busy"), "deaddead", i -> true, NOW);
    store.requestClose(new dev.pysandbox.store.SessionKey("local", "c3"));
    SessionClaim lost =
        store.claimSession("local", session("c3", "starting"), "22222222", i -> false, NOW);
    assertThat(lost.ours()).isFalse();
    assertThat(lost.owner()).isNull();
    assertThat(lost.ended().ended().as()).isEqualTo("lost");
    assertThat(lost.ended().ended().reason())
        .isEqualTo("its server (instance deaddead) stopped while it was open");
    assertThat(store.openSessions("local", i -> true)).isEmpty();
    assertThat(
            store.claimSession(
                "local", session("c3", "starting"), "22222222", i -> false, Instant.MAX))
        .as("create_session takes any ended id")
        .isEqualTo(SessionClaim.OURS);
    assertThat(store.openSessions("local", i -> true))
        .extracting(s -> s.sessionId() + ":" + s.state())
        .containsExactly("c3:starting");
    assertThat(store.closeRequests("22222222")).isEmpty();
    assertThat(store.closeOrphanSessions(i -> i.equals("22222222")))
        .as("the new owner is the one recorded")
        .isEmpty();
  }

  @Test
  void claimSession_ofAClosedSession_isOurs_withoutAskingAboutTheOldOwner() {
    store.claimSession("local", session("c4", "idle"), "11111111", i -> true, NOW);
    store.saveSession("local", session("c4", "closed"), "11111111");
    assertThat(
            store.claimSession(
                "local",
                session("c4", "starting"),
                "22222222",
                i -> {
                  throw new AssertionError("asked about " + i);
                },
                NOW))
        .as("closed without a recorded end (as before V12): free")
        .isEqualTo(SessionClaim.OURS);
    assertThat(store.openSessions("local", i -> true))
        .extracting(s -> s.sessionId() + ":" + s.state())
        .containsExactly("c4:starting");
    assertThat(store.closeOrphanSessions(i -> i.equals("22222222"))).isEmpty();
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void claimSession_racedByEightInstancesWithTheirOwnStores_hasExactlyOneWinner() throws Exception {
    int instances = 8;
    List<RunStore> stores = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(instances);
    try {
      for (int i = 0; i < instances; i++) {
        stores.add(newStore());
      }
      for (int round = 0; round < 5; round++) {
        SessionInfo contested = session("race" + round, "starting");
        CountDownLatch go = new CountDownLatch(1);
        List<Future<SessionClaim>> claims = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
          RunStore own = stores.get(i);
          String instance = String.format("%08x", i + 1);
          claims.add(
              pool.submit(
                  () -> {
                    go.await();
                    return own.claimSession("local", contested, instance, id -> true, NOW);
                  }));
        }
        go.countDown();
        List<String> winners = new ArrayList<>();
        List<String> ownersNamed = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
          SessionClaim claim = claims.get(i).get(60, TimeUnit.SECONDS);
          if (claim.ours()) {
            winners.add(String.format("%08x", i + 1));
          } else {
            ownersNamed.add(claim.owner());
          }
        }
        assertThat(winners).as("round %d winners", round).hasSize(1);
        assertThat(ownersNamed).hasSize(instances - 1).containsOnly(winners.get(0));
        assertThat(store.requestClose(new SessionKey("local", contested.sessionId()))).isTrue();
        assertThat(store.closeRequests(winners.get(0)))
            .as("the winner is the owner recorded")
            .contains(new SessionKey("local", contested.sessionId()));
      }
    } finally {
      pool.shutdownNow();
      stores.forEach(RunStore::close);
    }
  }

  // -- ends --------------------------------------------------------------------------------------

  private static SessionInfo ended(String id, String as, long atMillis, String code) {
    return session(id, "closed")
        .withEnded(
            new SessionEnd(as, Instant.ofEpochMilli(atMillis).toString(), "why " + id, code));
  }

  @Test
  void anEndedSession_isRecordedWithHowAndWhen_andListedSinceItsEnd() {
    store.claimSession("local", session("e1", "idle"), "11111111", i -> true, NOW);
    store.saveSession("local", ended("e1", "expired", 5000, null), "11111111");
    store.saveSession("local", ended("e2", "closed", 7000, null), "11111111");
    SessionInfo e1 = store.recordedSession("local", "e1").orElseThrow();
    assertThat(e1.state()).isEqualTo(SessionState.CLOSED);
    assertThat(e1.ended())
        .isEqualTo(
            new SessionEnd("expired", Instant.ofEpochMilli(5000).toString(), "why e1", null));
    assertThat(store.recordedSession("bob", "e1")).as("ids are per tenant").isEmpty();
    assertThat(store.endedSessions("local", Instant.ofEpochMilli(5000)))
        .extracting(SessionInfo::sessionId)
        .containsExactly("e1", "e2");
    assertThat(store.endedSessions("local", Instant.ofEpochMilli(5001)))
        .extracting(SessionInfo::sessionId)
        .containsExactly("e2");
    assertThat(store.endedSessions("bob", Instant.EPOCH)).isEmpty();
  }

  @Test
  void claimSession_ofASessionEndedAfterTheCutOff_answersHowItEnded_andBeforeItIsOurs() {
    store.saveSession("local", ended("e3", "closed", 5000, null), "11111111");
    SessionClaim refused =
        store.claimSession(
            "local", session("e3", "starting"), "22222222", i -> true, Instant.ofEpochMilli(5000));
    assertThat(refused.ended().ended().as()).isEqualTo("closed");
    assertThat(store.recordedSession("local", "e3").orElseThrow().state())
        .as("left as it was")
        .isEqualTo(SessionState.CLOSED);
    assertThat(
            store.claimSession(
                "local",
                session("e3", "starting"),
                "11111111",
                i -> true,
                Instant.ofEpochMilli(5000)))
        .as("not even its own server makes it again within the retention")
        .isNotEqualTo(SessionClaim.OURS);
    assertThat(
            store.claimSession(
                "local",
                session("e3", "starting"),
                "22222222",
                i -> true,
                Instant.ofEpochMilli(5001)))
        .isEqualTo(SessionClaim.OURS);
    SessionInfo now = store.recordedSession("local", "e3").orElseThrow();
    assertThat(now.state()).isEqualTo(SessionState.STARTING);
    assertThat(now.ended()).as("a new session has no end").isNull();
  }

  @Test
  void aFailedCreation_isRecorded_unlessTheIdIsOpen_andMayAlwaysBeClaimedAgain() {
    SessionInfo failed = ended("f1", "failed", 9000, "environment_failed");
    assertThat(store.recordFailedSession("local", failed, "11111111")).isTrue();
    SessionInfo row = store.recordedSession("local", "f1").orElseThrow();
    assertThat(row.ended().errorCode()).isEqualTo("environment_failed");
    assertThat(row.ended().reason()).isEqualTo("why f1");

    store.claimSession("local", session("f2", "idle"), "22222222", i -> true, NOW);
    assertThat(store.recordFailedSession("local", ended("f2", "failed", 9000, "internal"), "1"))
        .as("another server made it meanwhile: its row stays")
        .isFalse();
    assertThat(store.recordedSession("local", "f2").orElseThrow().state())
        .isEqualTo(SessionState.IDLE);

    assertThat(store.claimSession("local", session("f1", "starting"), "1", i -> true, NOW))
        .as("the core decides whether a failed creation may be tried again")
        .isEqualTo(SessionClaim.OURS);
  }

  @Test
  void openSessions_ofEveryTenant_nameTheirTenant_andADeadServersAreShownLost() {
    store.claimSession("local", session("a", "idle"), "11111111", i -> true, NOW);
    store.claimSession("bob", session("b", "busy"), "deaddead", i -> true, NOW);
    assertThat(store.openSessions(null, i -> true))
        .extracting(s -> s.tenant() + "/" + s.sessionId() + ":" + s.state())
        .as("by creation, then tenant")
        .containsExactly("bob/b:busy", "local/a:idle");
    List<SessionInfo> looked = store.openSessions(null, i -> i.equals("11111111"));
    assertThat(looked.get(1).ended()).isNull();
    assertThat(looked.get(0).state()).isEqualTo(SessionState.CLOSED);
    assertThat(looked.get(0).ended().as()).isEqualTo("lost");
    assertThat(store.recordedSession("bob", "b").orElseThrow().state())
        .as("looking records nothing")
        .isEqualTo(SessionState.BUSY);
    assertThat(store.openSessions("local", i -> true).get(0).tenant())
        .as("one tenant's listing does not name it")
        .isNull();
  }

  // -- steps -------------------------------------------------------------------------------------

  @Test
  void sessionSteps_areKeptInOrder_perTenantAndSession_withTheirDetail() {
    java.util.Map<String, Object> values = new java.util.LinkedHashMap<>();
    values.put("b", java.util.List.of(1, "x"));
    values.put("a", java.util.Map.of("k", true));
    store.recordSessionStep(
        "local",
        "s",
        new dev.pysandbox.api.SessionStep(
            "set_context", "2026-01-01T00:00:00Z", null, java.util.Map.of("values", values)));
    store.recordSessionStep(
        "local",
        "s",
        new dev.pysandbox.api.SessionStep(
            "upload_file",
            "2026-01-01T00:00:00Z",
            "run_1",
            java.util.Map.of("path", "d.csv", "size_bytes", 3, "sha256", "ab")));
    store.recordSessionStep(
        "bob",
        "s",
        new dev.pysandbox.api.SessionStep("clear_context", "2026-01-01T00:00:01Z", null, null));
    List<dev.pysandbox.api.SessionStep> steps = store.sessionSteps("local", "s", 10);
    assertThat(steps)
        .extracting(dev.pysandbox.api.SessionStep::kind)
        .containsExactly("set_context", "upload_file");
    assertThat(steps.get(0).detail()).isEqualTo(java.util.Map.of("values", values));
    @SuppressWarnings("unchecked")
    java.util.Map<String, Object> back =
        (java.util.Map<String, Object>) steps.get(0).detail().get("values");
    assertThat(List.copyOf(back.keySet())).as("in the order set").containsExactly("b", "a");
    assertThat(steps.get(1).afterRunId()).isEqualTo("run_1");
    assertThat(steps.get(1).at()).isEqualTo("2026-01-01T00:00:00Z");
    assertThat(store.sessionSteps("local", "s", 1)).hasSize(1);
    assertThat(store.sessionSteps("local", "other", 10)).isEmpty();
    assertThat(store.sessionSteps("bob", "s", 10))
        .extracting(dev.pysandbox.api.SessionStep::kind)
        .containsExactly("clear_context");
  }
}
